-- Services whose replica events a failed call may have left out of a snapshot (the tables
-- of replicas.list, replicas.health and deployments.list: scope.ENDPOINT_TABLES), with the
-- endpoints that failed: an error that covers the service (error_covers.sql). A 404 is
-- what the key may not see, no failure. No OOM kill found there is no evidence of none:
-- REP002 and RES006 do not judge it.
create or replace view replica_events_uncollected as
select s.snapshot_id, s.id, string_agg(distinct e.endpoint, ', ' order by e.endpoint) as failed
from services as s
join collection_errors as e on e.snapshot_id = s.snapshot_id
    and error_covers(e.team_id, e.project_id, e.environment_id, e.service_id,
        s.team_id, s.project_id, s.environment_id, s.id)
where e.endpoint in ('replicas.list', 'replicas.health', 'deployments.list')
    and not coalesce(e.not_visible, false)
group by all
