-- id: KEY001
-- title: API key has the admin role
-- severity: high
-- area: key-scope
-- risk: An admin key can delete environments with their services and volumes and manage access; if it leaks, everything it reaches can be destroyed.
-- remediation: Use the least role that does the job (viewer for dashboards, editor for deploys) and keep admin keys out of automation.
-- history: snapshot
select
    snapshot_id, 'credential' as resource_type, name as resource_id, name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when role = 'admin' then 'alarm' else 'ok' end as status,
    'Key ' || name || coalesce(' (' || key_name || ')', '') || ' has the ' || role || ' role'
        || case when role = 'admin' then ', which may delete resources and manage access' else '' end
        || ' (access: ' || coalesce(access, 'unknown') || ').' as reason,
    to_json(struct_pack(key_id, key_name, role, access, expires_at)) as evidence
from credentials
where role in ('viewer', 'editor', 'admin')
