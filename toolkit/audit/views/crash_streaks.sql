-- Each service in each snapshot where whether it is crashing is known (crashing: true where
-- its health reading, a replica's status or its current deployment's status says
-- 'crashing', as REP001 judges; false where a health reading of the spec's others says not;
-- neither, as a health value outside them: no row), with the streak a crashing one belongs
-- to: start_seq, the seq of the snapshot where the streak began, and crash_started, that
-- snapshot's time (both null when no start was read: it began in the service's first
-- snapshot read, or before); began_unseen: that first snapshot is not the store's first,
-- and the service was created before it (or when is not reported), so such a streak may
-- have begun unseen. changed: the configuration fields (the services columns but identity,
-- names, times and deployment columns) reported on both sides that differ at the streak's
-- start from the snapshot before it, or from two before where the service was not crashing
-- there; config_before and config_after are the two configurations compared, as JSON. A
-- service not crashing has null streak columns. Only services that ever crash are sorted, and only streak
-- starts diffed: those of the streaks of the rows judged. DEP001 reads it.
create or replace view crash_streaks as
with judged as (  -- narrow rows (names are joined at the end, by the check)
    select
        s.snapshot_id, s.id, n.seq, n.snapshot_at as taken_at,
        -- in the first snapshot read, not the store's first (seq 1: nothing seen before it),
        -- and created before it or when not reported: a streak may have begun unseen there
        n.seq = (select min(seq) from snapshots) and n.seq > 1
            and coalesce(s.created_at < n.snapshot_at, true) as pre_existing,
        -- unknown (null) without a health reading (a failed call is no recovery) or with one
        -- outside the spec's values (no evidence either way), as REP001
        case
            when h.health = 'crashing' or p.service_id is not null
                or s.current_deployment_status = 'crashing' then true
            when h.health in ('pending', 'active', 'terminating') then false
        end as crashing
    from services as s
    join snapshots as n using (snapshot_id)
    left join replica_health as h on h.snapshot_id = s.snapshot_id and h.service_id = s.id
    left join (select distinct snapshot_id, service_id from replicas where status = 'crashing')
        as p on p.snapshot_id = s.snapshot_id and p.service_id = s.id
),
state as (  -- only services that ever crash need their history sorted: whole partitions
    select *,
        lag(crashing ignore nulls) over w as was_crashing,  -- the last known state
        -- the configuration a crash is compared with: two snapshots back when it was not
        -- crashing there (a crash there would blame the fix that ended it), else one back
        if(lag(crashing, 2) over w = false, lag(snapshot_id, 2) over w, lag(snapshot_id) over w)
            as base_snapshot_id,
        -- the service's first row read: a streak with no start began there or before
        first_value(pre_existing) over w as began_unseen
    from judged
    semi join (select id from judged where crashing) as c using (id)
    window w as (partition by id order by seq)
),
streaks as (  -- crashing rows only (few): the start of the streak each one belongs to
    select snapshot_id, id, began_unseen,
        max(if(not coalesce(was_crashing, true), seq, null))
            over (partition by id order by seq) as start_seq
    from state
    where crashing
),
starts as (  -- where the streaks of the rows judged began: few, so only they are diffed
    select id, seq, taken_at, snapshot_id, base_snapshot_id
    from state
    semi join (select id, start_seq as seq from streaks where judging(snapshot_id)) as j
        using (id, seq)
    where crashing and not coalesce(was_crashing, true)
),
config as (
    select snapshot_id, id, to_json(struct_pack(*COLUMNS(lambda c: c not in ('snapshot_id',
        'snapshot_at', 'id', 'team_id', 'project_id', 'environment_id', 'name', 'description',
        'created_at', 'updated_at', 'runtime_name', 'permissions', 'extra')
        and c not like '%deployment%'))) as cfg
    from services
    semi join (
        select snapshot_id, id from starts
        union all
        select base_snapshot_id, id from starts
    ) as k using (snapshot_id, id)
),
changes as (
    select
        st.id, st.seq, st.taken_at, a.cfg, b.cfg as base,
        -- a field not reported (null) on either side is no evidence of a change: as text, a
        -- JSON null is null, and so is the comparison
        list_filter(json_keys(a.cfg), lambda k: json_extract_string(a.cfg, '$."' || k || '"')
            <> json_extract_string(b.cfg, '$."' || k || '"')) as changed
    from starts as st
    join config as a on a.snapshot_id = st.snapshot_id and a.id = st.id
    left join config as b on b.snapshot_id = st.base_snapshot_id and b.id = st.id
)
select s.snapshot_id, s.id as service_id, s.crashing, k.start_seq, k.began_unseen,
    b.taken_at as crash_started, b.changed, b.base as config_before, b.cfg as config_after
from judged as s
left join streaks as k on k.snapshot_id = s.snapshot_id and k.id = s.id
left join changes as b on b.id = s.id and b.seq = k.start_seq and s.crashing
where s.crashing is not null  -- not judged without a health reading
    and judging(s.snapshot_id)  -- views/judging.sql: the rows judged, from their history
