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
        -- null when a side cannot be judged: its limit, or the request under a set limit, is
        -- not reported (missing data is neither an alarm nor a fix); no limit (<= 0) is false
        cpu_limits_millicores > 0
            and cpu_requests_millicores > cpu_limits_millicores as cpu_over,
        memory_limits_megabytes > 0
            and memory_requests_megabytes > memory_limits_megabytes as memory_over
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
    case when cpu_over or memory_over then 'alarm'
        when cpu_over is null or memory_over is null then 'unknown' else 'ok' end as status,
    case
        when cpu_over or memory_over then format(
            'Service {} requests more than its limit: {}.', coalesce(name, id), concat_ws('; ',
                case when cpu_over then format('CPU {} > {} millicores',
                    cpu_requests_millicores, cpu_limits_millicores) end,
                case when memory_over then format('memory {} > {} MB',
                    memory_requests_megabytes, memory_limits_megabytes) end))
        when cpu_over is null or memory_over is null then format(
            'Service {}: its {} limit or request is not reported: not judged.', coalesce(name, id),
            case when cpu_over is null and memory_over is null then 'CPU and memory'
                when cpu_over is null then 'CPU' else 'memory' end)
        else format('Service {} requests no more than its limits.', coalesce(name, id))
    end as reason,
    to_json(struct_pack(
        cpu_requests_millicores, cpu_limits_millicores,
        memory_requests_megabytes, memory_limits_megabytes
    )) as evidence
from judged
