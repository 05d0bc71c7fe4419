-- id: DEP001
-- title: Crash loop began right after a configuration change
-- severity: high
-- area: deployments
-- risk: A configuration change (image, command, resources, health check...) broke the service, and it stays broken until someone connects the two.
-- remediation: Compare the changed settings with the last working configuration and revert or fix them.
-- history: all
with judged as (  -- narrow rows (names are joined at the end)
    select
        s.snapshot_id, s.id, n.seq, n.snapshot_at as taken_at,
        -- in the first snapshot read, not the store's first (seq 1: nothing seen before it),
        -- and created before it or when not reported: a streak may have begun unseen there
        n.seq = (select min(seq) from snapshots) and n.seq > 1
            and coalesce(s.created_at < n.snapshot_at, true) as pre_existing,
        -- unknown (null) without a health reading: a failed call is no recovery
        case
            when h.health = 'crashing' or s.current_deployment_status = 'crashing' then true
            when h.service_id is not null then false
        end as crashing
    from services as s
    join snapshots as n using (snapshot_id)
    left join replica_health as h on h.snapshot_id = s.snapshot_id and h.service_id = s.id
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
starts as (  -- the snapshots where a crash streak began: few, so only they are diffed
    select id, seq, taken_at, snapshot_id, base_snapshot_id
    from state
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
        list_filter(json_keys(a.cfg), lambda k: json_extract(a.cfg, '$."' || k || '"')
            is distinct from json_extract(b.cfg, '$."' || k || '"')) as changed
    from starts as st
    join config as a on a.snapshot_id = st.snapshot_id and a.id = st.id
    left join config as b on b.snapshot_id = st.base_snapshot_id and b.id = st.id
)
select
    s.snapshot_id, 'service' as resource_type, s.id as resource_id, v.name as resource_name,
    v.team_id, v.project_id, v.environment_id, s.id as service_id,
    case
        when s.crashing and len(b.changed) > 0 then 'alarm'
        -- no start read, and it existed before the snapshots read: 'ok' would end an alarm
        when s.crashing and k.start_seq is null and k.began_unseen then 'unknown'
        else 'ok'
    end as status,
    format('Service {} {}.', coalesce(v.name, s.id), case
        when not s.crashing then 'is not crashing'
        when b.seq is null and k.began_unseen then concat('has been crashing since before ',
            'the snapshots read (created ', coalesce(strftime(v.created_at, '%Y-%m-%d %H:%M UTC'),
            'at a time not reported'), '), so whether a change started it cannot be judged')
        when b.seq is null then 'has been crashing since it was first seen, so no change is blamed'
        else 'has been crashing since ' || strftime(b.taken_at, '%Y-%m-%d %H:%M UTC') || if(
            len(b.changed) > 0,
            ', right after its configuration changed (' || array_to_string(b.changed, ', ') || ')',
            ', with no configuration change in that snapshot or the one before')
    end) as reason,
    to_json(struct_pack(crash_started := b.taken_at, changed := b.changed,
        hash_before := md5(b.base), hash_after := md5(b.cfg))) as evidence
from judged as s
join services as v on v.snapshot_id = s.snapshot_id and v.id = s.id
left join streaks as k on k.snapshot_id = s.snapshot_id and k.id = s.id
left join changes as b on b.id = s.id and b.seq = k.start_seq and s.crashing
where s.crashing is not null  -- not judged without a health reading
