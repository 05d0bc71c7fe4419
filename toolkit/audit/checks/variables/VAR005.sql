-- id: VAR005
-- title: Variable reference does not resolve
-- severity: medium
-- area: variables
-- risk: A service reading an unresolved ${{...}} reference gets an empty or literal value and fails, often only at runtime.
-- remediation: Create the referenced variable or fix the reference expression.
-- history: snapshot
-- Each variable's references, resolved or not: see views/reference_resolution.sql
select
    r.snapshot_id, 'variable' as resource_type, v.variable_id as resource_id,
    r.variable_name as resource_name, r.team_id, r.project_id, r.environment_id, r.service_id,
    case when r.failing then 'alarm' else 'ok' end as status,
    case when r.unresolved > 0
        then 'Variable ' || r.variable_name || ' has ' || r.unresolved || ' of ' || r.refs
            || ' references unresolved: ' || array_to_string(list_transform(r.failed,
                lambda f: coalesce(f.token, f.source_type || '.' || f.key)), ', ') || '.'
        else 'Variable ' || r.variable_name || ': all ' || r.resolved
            || ' checked reference(s) resolve.'
    end as reason,
    to_json(struct_pack(
        reference_count := r.refs,
        unresolved := coalesce(list_transform(r.failed, lambda f: struct_pack(token := f.token,
            source_type := f.source_type, source_id := f.source_id, key := f.key)), [])
    )) as evidence
from reference_resolution r
join owned_variables v
    on v.snapshot_id = r.snapshot_id and v.level = r.level and v.name = r.variable_name
    and v.owner_id = coalesce(r.service_id, r.environment_id, r.project_id, r.team_id)
