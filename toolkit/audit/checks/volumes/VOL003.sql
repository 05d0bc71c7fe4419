-- id: VOL003
-- title: Volume resize is pending
-- severity: low
-- area: volumes
-- risk: A resize that does not complete leaves the volume at its old size, usually while it is filling up.
-- remediation: Check why the resize waits (a restart of the service is often needed) and complete or cancel it.
-- history: all
-- The history is read narrow (each volume's flag in each snapshot, for its streaks); the
-- rows judged (views/judging.sql) are read whole.
with flags as (
    select v.snapshot_id, v.id, v.is_pending_resize, n.snapshot_at as taken_at, n.seq
    from volumes as v join snapshots as n using (snapshot_id)
),
history as (  -- only volumes that were ever pending need their history sorted
    select snapshot_id, id, is_pending_resize, taken_at,
        -- only a reported false ends a streak: a null is no fix
        sum(if(not is_pending_resize, 1, 0)) over (partition by id order by seq) as streak
    from flags semi join (select id from flags where is_pending_resize) as p using (id)
),
pending as (  -- when each streak's resize was first seen: few rows, grouped, not windowed
    select id, streak, min(taken_at) as since
    from history
    where is_pending_resize
    group by id, streak
),
judged as (  -- a streak from the first snapshot read may have begun before it
    select v.*, n.snapshot_at as taken_at, p.since,
        p.since = (select min(taken_at) from flags) as since_first_read
    from volumes as v
    join snapshots as n using (snapshot_id)
    left join history as h on h.snapshot_id = v.snapshot_id and h.id = v.id
    left join pending as p on p.id = h.id and p.streak = h.streak
    where judging(v.snapshot_id)
)
select
    snapshot_id, 'volume' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, mounted_on_service_id as service_id,
    case when is_pending_resize is null then 'unknown'  -- not reported: never a fix
        when is_pending_resize then 'alarm' else 'ok' end as status,
    case
        when is_pending_resize is null then format('Volume {}: whether a resize is pending '
            || '(is_pending_resize) is not reported: not judged.', coalesce(name, id))
        when is_pending_resize then format(
            'Volume {} has had a resize from {} GB to {} GB pending since {}{} ({}{} h, status {}).',
            coalesce(name, id), coalesce(capacity_gb::varchar, 'unknown'),
            coalesce(requested_gb::varchar, 'unknown'), if(since_first_read, 'at least ', ''),
            strftime(since, '%Y-%m-%d %H:%M UTC'), if(since_first_read, 'at least ', ''),
            round(epoch(taken_at - since) / 3600, 1), coalesce(status, 'not reported'))
        else format('Volume {} has no pending resize ({} GB).', coalesce(name, id),
            coalesce(capacity_gb::varchar, 'unknown'))
    end as reason,
    to_json(struct_pack(is_pending_resize, since, capacity_gb, requested_gb, status)) as evidence
from judged
