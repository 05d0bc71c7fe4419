-- id: RES001
-- title: Service runs without a CPU limit
-- severity: medium
-- area: resource-limits
-- risk: A busy loop or a burst of traffic in one service can take every core of its node and starve the services beside it.
-- remediation: Set cpu_limits_millicores to what the service needs at peak, with some headroom.
-- history: snapshot
select
    snapshot_id,
    'service' as resource_type,
    id as resource_id,
    name as resource_name,
    team_id,
    project_id,
    environment_id,
    id as service_id,
    -- null: not reported (schema drift, no resources object): missing data is no alarm
    case when cpu_limits_millicores is null then 'unknown'
        when cpu_limits_millicores <= 0 then 'alarm' else 'ok' end as status,
    case
        when cpu_limits_millicores is null then format(
            'Service {}: its CPU limit (cpu_limits_millicores) is not reported: not judged.',
            coalesce(name, id))
        when cpu_limits_millicores <= 0
            then format(
                'Service {} has no CPU limit (cpu_limits_millicores is {}).',
                coalesce(name, id), cpu_limits_millicores
            )
        else format('Service {} is limited to {} millicores of CPU.',
            coalesce(name, id), cpu_limits_millicores)
    end as reason,
    to_json(struct_pack(cpu_limits_millicores, cpu_requests_millicores)) as evidence
from services
