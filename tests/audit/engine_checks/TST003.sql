-- id: TST003
-- title: Service lost replicas since the previous snapshot (engine tests)
-- severity: low
-- area: replicas
-- risk: A silent scale-down reduces capacity.
-- remediation: Check who scaled the service down.
with ordered as (
    select
        s.*,
        lag(s.replicas) over (partition by s.id order by snap.seq) as previous_replicas
    from services s
    join snapshots snap using (snapshot_id)
)
select
    snapshot_id,
    'service' as resource_type,
    id as resource_id,
    name as resource_name,
    team_id,
    project_id,
    environment_id,
    id as service_id,
    case when replicas < previous_replicas then 'alarm' else 'ok' end as status,
    'Service ' || name || ' runs ' || coalesce(replicas, 0) || ' replicas, '
        || coalesce(previous_replicas::varchar, 'unknown') || ' before.' as reason,
    json_object('replicas', replicas, 'previous', previous_replicas) as evidence
from ordered
