-- id: RES003
-- title: Service requests neither CPU nor memory
-- severity: low
-- area: resource-limits
-- risk: Without requests the scheduler reserves nothing for the service, so it lands on crowded nodes and is the first to be evicted under pressure.
-- remediation: Set cpu_requests_millicores and memory_requests_megabytes to what the service uses at rest.
-- history: snapshot
with judged as (
    select
        *,
        coalesce(cpu_requests_millicores, -1) <= 0
        and coalesce(memory_requests_megabytes, -1) <= 0 as no_requests
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
    case when no_requests then 'alarm' else 'ok' end as status,
    format(
        'Service {} {} (CPU request {}, memory request {}).',
        coalesce(name, id),
        case when no_requests then 'requests neither CPU nor memory' else 'has requests' end,
        case when cpu_requests_millicores > 0 then cpu_requests_millicores || ' millicores'
            else coalesce(cpu_requests_millicores::varchar, 'not set') end,
        case when memory_requests_megabytes > 0 then memory_requests_megabytes || ' MB'
            else coalesce(memory_requests_megabytes::varchar, 'not set') end
    ) as reason,
    to_json(struct_pack(cpu_requests_millicores, memory_requests_megabytes)) as evidence
from judged
