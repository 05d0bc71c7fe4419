-- id: RVW001
-- title: Service runs without a memory limit (review tests)
-- severity: high
-- area: resource-limits
-- risk: A leak can exhaust the node.
-- remediation: Set a memory limit.
select
    snapshot_id,
    'service' as resource_type,
    id as resource_id,
    name as resource_name,
    team_id,
    project_id,
    environment_id,
    id as service_id,
    case when coalesce(memory_limits_megabytes, -1) <= 0 then 'alarm' else 'ok' end as status,
    'Service ' || name || ' memory limit ' || coalesce(memory_limits_megabytes, -1) || ' MB.'
        as reason,
    to_json(struct_pack(memory_limits_megabytes)) as evidence
from services
