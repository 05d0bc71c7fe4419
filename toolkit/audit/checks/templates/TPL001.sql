-- id: TPL001
-- title: Service runs an outdated template version
-- severity: low
-- area: templates
-- risk: A service deployed from an old template version misses its security fixes and configuration changes.
-- remediation: Update the service to the template's current version, after reading what changed.
-- history: snapshot
select
    s.snapshot_id, 'service' as resource_type, s.id as resource_id, s.name as resource_name,
    s.team_id, s.project_id, s.environment_id, s.id as service_id,
    case when s.template_version < t.version then 'alarm' else 'ok' end as status,
    'Service ' || coalesce(s.name, s.id) || ' runs version ' || s.template_version || ' of template '
        || coalesce(t.name, s.template_name, s.template_id) || case when s.template_version < t.version
            then ', ' || (t.version - s.template_version) || ' behind the current ' || t.version || '.'
            when s.template_version > t.version
            then ', newer than the version the template list shows (' || t.version || ').'
            else ', the current version (' || t.version || ').' end as reason,
    to_json(struct_pack(template_id := s.template_id, template_name := t.name,
        service_version := s.template_version, current_version := t.version)) as evidence
from services s
join templates t on t.snapshot_id = s.snapshot_id and t.id = s.template_id
where s.template_version is not null and t.version is not null
