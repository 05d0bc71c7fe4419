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
        -- a request above 0 is enough for 'ok'; else a null (not reported) cannot be judged
        case when cpu_requests_millicores > 0 or memory_requests_megabytes > 0 then 'ok'
            when cpu_requests_millicores is null or memory_requests_megabytes is null
                then 'unknown'
            else 'alarm' end as judgement
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
    judgement as status,
    format(
        'Service {} {} (CPU request {}, memory request {}).',
        coalesce(name, id),
        case judgement when 'alarm' then 'requests neither CPU nor memory'
            when 'unknown' then 'has a request not reported: not judged'
            else 'has requests' end,
        case when cpu_requests_millicores > 0 then cpu_requests_millicores || ' millicores'
            else coalesce(cpu_requests_millicores::varchar, 'not reported') end,
        case when memory_requests_megabytes > 0 then memory_requests_megabytes || ' MB'
            else coalesce(memory_requests_megabytes::varchar, 'not reported') end
    ) as reason,
    to_json(struct_pack(cpu_requests_millicores, memory_requests_megabytes)) as evidence
from judged
