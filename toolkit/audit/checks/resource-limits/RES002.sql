-- id: RES002
-- title: Service runs without a memory limit
-- severity: high
-- area: resource-limits
-- risk: A memory leak or burst in one service can exhaust the node and evict its neighbours.
-- remediation: Set memory_limits_megabytes to what the service needs, with some headroom.
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
    case when memory_limits_megabytes is null then 'unknown'
        when memory_limits_megabytes <= 0 then 'alarm' else 'ok' end as status,
    -- concat(): one string a row, where format() took 0.08 of 0.28 s over 900,000 rows
    case
        when memory_limits_megabytes is null then concat(
            'Service ', coalesce(name, id),
            ': its memory limit (memory_limits_megabytes) is not reported: not judged.'
        )
        when memory_limits_megabytes <= 0
            then concat(
                'Service ', coalesce(name, id), ' has no memory limit (memory_limits_megabytes is ',
                memory_limits_megabytes, ').'
            )
        else concat(
            'Service ', coalesce(name, id), ' is limited to ', memory_limits_megabytes,
            ' MB of memory.'
        )
    end as reason,
    -- the evidence's JSON written out: integers, no text to escape (to_json of a
    -- struct_pack took a tenth of the check)
    concat(
        '{"memory_limits_megabytes":', coalesce(memory_limits_megabytes::varchar, 'null'),
        ',"memory_requests_megabytes":', coalesce(memory_requests_megabytes::varchar, 'null'), '}'
    ) as evidence
from services
