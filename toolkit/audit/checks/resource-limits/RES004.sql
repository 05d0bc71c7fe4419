-- id: RES004
-- title: Service requests more than its limit
-- severity: medium
-- area: resource-limits
-- risk: A request above the limit cannot be honoured: the deployment is refused or silently clamped, and capacity planning counts resources the service can never use.
-- remediation: Lower the request to at most the limit, or raise the limit to cover the request.
-- history: snapshot
with judged as (
    select
        *,
        coalesce(cpu_limits_millicores > 0
            and cpu_requests_millicores > cpu_limits_millicores, false) as cpu_over,
        coalesce(memory_limits_megabytes > 0
            and memory_requests_megabytes > memory_limits_megabytes, false) as memory_over
    from services
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
    case when cpu_over or memory_over then 'alarm' else 'ok' end as status,
    case
        when cpu_over or memory_over then format(
            'Service {} requests more than its limit: {}.', coalesce(name, id), concat_ws('; ',
                case when cpu_over then format('CPU {} > {} millicores',
                    cpu_requests_millicores, cpu_limits_millicores) end,
                case when memory_over then format('memory {} > {} MB',
                    memory_requests_megabytes, memory_limits_megabytes) end))
        else format('Service {} requests no more than its limits.', coalesce(name, id))
    end as reason,
    to_json(struct_pack(
        cpu_requests_millicores, cpu_limits_millicores,
        memory_requests_megabytes, memory_limits_megabytes
    )) as evidence
from judged
