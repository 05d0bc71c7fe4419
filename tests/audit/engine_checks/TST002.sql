-- id: TST002
-- title: Service runs too few replicas (engine tests)
-- severity: medium
-- area: replicas
-- risk: One replica is one failure away from an outage.
-- remediation: Run more replicas.
-- param: min_replicas = 2 | services with fewer replicas than this are flagged
-- param: label = 'replicas' | a string parameter, to show strings reach DuckDB too
select
    snapshot_id,
    'service' as resource_type,
    id as resource_id,
    name as resource_name,
    team_id,
    project_id,
    environment_id,
    id as service_id,
    case when coalesce(replicas, 0) < $min_replicas then 'alarm' else 'ok' end as status,
    'Service ' || name || ' runs ' || coalesce(replicas, 0) || ' ' || $label || ' (minimum '
        || $min_replicas || ').' as reason,
    json_object('replicas', replicas, 'min_replicas', $min_replicas) as evidence
from services
