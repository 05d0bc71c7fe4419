-- OOM kills of each service seen in a snapshot within window_days before it: each replica's
-- (or deployment's) own kills are its events' largest count, summed over the replicas; the
-- deployments' copies of the same kills count only when no replica shows its events.
-- An event's count is its running total since its first_seen, so the kills may predate the
-- window: first_oom is the earliest first_seen of the events counted, last_oom the latest
-- kill, snapshot_at the snapshot's time. A table macro, not a view, as the window is the
-- calling check's parameter: from oom_kills($window_days).
create or replace macro oom_kills(window_days) as table
with seen as (
    select e.snapshot_id, s.snapshot_at, e.service_id, e.source, coalesce(e.count, 1) as count,
        coalesce(e.replica_name, e.deployment_id, '') as place,
        coalesce(e.last_seen, e.timestamp, e.first_seen) as seen_at,
        coalesce(e.first_seen, e.timestamp, e.last_seen) as first_at
    from replica_events as e join snapshots as s using (snapshot_id)
    where e.type = 'oom_killed'
        and coalesce(e.last_seen, e.timestamp, e.first_seen)
            >= s.snapshot_at - window_days * interval 1 day
),
places as (
    select snapshot_id, snapshot_at, service_id, source, place, max(count) as kills,
        max(seen_at) as last_oom, min(first_at) as first_oom
    from seen group by all
)
select snapshot_id, service_id, any_value(snapshot_at) as snapshot_at,
    max(last_oom) as last_oom,
    coalesce(min(first_oom) filter (where source = 'replica'), min(first_oom)) as first_oom,
    coalesce(sum(kills) filter (where source = 'replica'), sum(kills)) as kills
from places group by snapshot_id, service_id
