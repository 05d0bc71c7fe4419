-- id: VAR002
-- title: Protected variable name is shadowed at another level
-- severity: medium
-- area: variables
-- risk: A same-named team, project or environment variable (or a sibling's plain copy) gives other services and ${{...}} references a second, unmanaged value of a credential the service manages.
-- remediation: Delete the other definitions and reference the managed one as ${{service.<id>.NAME}}.
with protected as (
    select * from variable_items where level = 'service' and is_protected
),
shadows as (
    select p.snapshot_id, p.variable_id, o.variable_id as other_id, o.level as other_level
    from protected p
    join variable_items o
        on o.snapshot_id = p.snapshot_id and o.name = p.name and o.variable_id <> p.variable_id
    where (o.level = 'team' and o.team_id = p.team_id)
       or (o.level = 'project' and o.project_id = p.project_id)
       or (o.level = 'environment' and o.environment_id = p.environment_id)
       or (o.level = 'service' and o.environment_id = p.environment_id
           and not coalesce(o.is_reference, false) and not coalesce(o.is_protected, false))
)
select
    p.snapshot_id, 'variable' as resource_type, p.variable_id as resource_id,
    p.name as resource_name, p.team_id, p.project_id, p.environment_id, p.service_id,
    case when count(s.other_id) > 0 then 'alarm' else 'ok' end as status,
    case when count(s.other_id) > 0
        then 'Protected variable ' || p.name || ' is also defined by ' || count(s.other_id)
            || ' other variable(s) in its scope (' || string_agg(s.other_level, ', ' order by s.other_level) || ').'
        else 'Protected variable ' || p.name || ' is defined only by its service.'
    end as reason,
    to_json(struct_pack(
        shadowed_by := coalesce(list(s.other_id order by s.other_id) filter (where s.other_id is not null), [])
    )) as evidence
from protected p
left join shadows s using (snapshot_id, variable_id)
group by 1, 2, 3, 4, 5, 6, 7, 8
