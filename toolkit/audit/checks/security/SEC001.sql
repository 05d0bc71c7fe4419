-- id: SEC001
-- title: Container runs privileged
-- severity: critical
-- area: security
-- risk: A privileged container has every capability and the host's devices; a compromise of the service is a compromise of the node and its neighbours.
-- remediation: Turn privileged off and add only the specific capabilities the service needs.
-- history: snapshot
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when privileged then 'alarm' else 'ok' end as status,
    'Service ' || coalesce(name, id) || case when privileged then ' runs as a privileged container.'
        else ' does not run privileged.' end as reason,
    to_json(struct_pack(privileged, capabilities_add, capabilities_drop)) as evidence
from services
where privileged is not null
