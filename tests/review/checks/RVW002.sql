-- id: RVW002
-- title: Service runs no replica (review tests)
-- severity: critical
-- area: replicas
-- risk: Nothing serves.
-- remediation: Run at least one replica.
select
    snapshot_id,
    'service' as resource_type,
    id as resource_id,
    name as resource_name,
    team_id,
    project_id,
    environment_id,
    id as service_id,
    case when coalesce(replicas, 0) < 1 then 'alarm' else 'ok' end as status,
    'Service ' || name || ' runs ' || coalesce(replicas, 0) || ' replicas.' as reason,
    to_json(struct_pack(replicas)) as evidence
from services
