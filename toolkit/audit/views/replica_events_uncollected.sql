-- Services whose replica events a failed call may have left out of a snapshot (the tables
-- of replicas.list, replicas.health and deployments.list: scope.ENDPOINT_TABLES), with the
-- endpoints that failed: an error whose ids cover the service's (an id it lacks covers
-- every child). A 404 is what the key may not see, no failure. No OOM kill found there is
-- no evidence of none: REP002 and RES006 do not judge it.
create or replace view replica_events_uncollected as
select s.snapshot_id, s.id, string_agg(distinct e.endpoint, ', ' order by e.endpoint) as failed
from services as s
join collection_errors as e on e.snapshot_id = s.snapshot_id
    and coalesce(e.team_id = s.team_id, true) and coalesce(e.project_id = s.project_id, true)
    and coalesce(e.environment_id = s.environment_id, true)
    and coalesce(e.service_id = s.id, true)
where e.endpoint in ('replicas.list', 'replicas.health', 'deployments.list')
    and not coalesce(e.not_visible, false)
group by all
