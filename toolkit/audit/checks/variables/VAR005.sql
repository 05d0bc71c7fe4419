-- id: VAR005
-- title: Variable reference does not resolve
-- severity: medium
-- area: variables
-- risk: A service reading an unresolved ${{...}} reference gets an empty or literal value and fails, often only at runtime.
-- remediation: Create the referenced variable or fix the reference expression.
select
    r.snapshot_id, 'variable' as resource_type, v.variable_id as resource_id,
    r.variable_name as resource_name, r.team_id, r.project_id, r.environment_id, r.service_id,
    case when count(*) filter (where r.resolved = false) > 0 then 'alarm' else 'ok' end as status,
    case when count(*) filter (where r.resolved = false) > 0
        then 'Variable ' || r.variable_name || ' has ' || count(*) filter (where r.resolved = false)
            || ' of ' || count(*) || ' references unresolved: '
            || string_agg(coalesce(r.token, r.source_type || '.' || r.key), ', ' order by r.position)
                filter (where r.resolved = false) || '.'
        else 'Variable ' || r.variable_name || ': all ' || count(*) filter (where r.resolved)
            || ' checked reference(s) resolve.'
    end as reason,
    to_json(struct_pack(
        reference_count := count(*),
        unresolved := coalesce(list(struct_pack(r.token, r.source_type, r.source_id, r.key)
            order by r.position) filter (where r.resolved = false), [])
    )) as evidence
from variable_references r
join variable_items v
    on v.snapshot_id = r.snapshot_id and v.level = r.level and v.name = r.variable_name
    and v.owner_id = coalesce(r.service_id, r.environment_id, r.project_id, r.team_id)
where r.resolved is not null
group by 1, 2, 3, 4, 5, 6, 7, 8
