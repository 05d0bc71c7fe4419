-- id: VAR002
-- title: Protected variable name is shadowed at another level
-- severity: medium
-- area: variables
-- risk: A same-named team, project or environment variable (or a sibling's plain copy) gives other services and ${{...}} references a second, unmanaged value of a credential the service manages.
-- remediation: Delete the other definitions and reference the managed one as ${{service.<id>.NAME}}.
-- history: snapshot
with protected as (
    select snapshot_id, variable_id, name, team_id, project_id, environment_id, service_id
    from owned_variables where level = 'service' and is_protected
),
scopes as (  -- the team, project and environment each protected variable sits in
    select p.snapshot_id, p.variable_id, p.name, s.scope,
        case s.scope when 'team' then p.team_id when 'project' then p.project_id
            else p.environment_id end as scope_id
    from protected p cross join (values ('team'), ('project'), ('environment')) s(scope)
),
others as (  -- variables that may shadow one: service-level ones act in their environment
    select snapshot_id, variable_id, name, level,
        case level when 'service' then 'environment' else level end as scope,
        case level when 'team' then team_id when 'project' then project_id
            else environment_id end as scope_id,
        -- a value that was redacted may be the reference the remediation asks for
        is_reference is null as unknown
    from owned_variables
    -- a ${{...}} reference (is_reference: the value holds one) is no second value, at any level
    where is_reference is not true
      and (level in ('team', 'project', 'environment')
           or (level = 'service' and not coalesce(is_protected, false)))
      -- few names are protected: only variables named like one can shadow one (a list
      -- test per row, where a semi join would hash every candidate)
      and list_contains((select list(distinct name) from protected), name)
),
shadows as (
    -- an equi-join on the scope: the same name is defined in thousands of services
    select p.snapshot_id, p.variable_id, count(*) filter (where not o.unknown) as shadows,
        count(*) filter (where o.unknown) as unjudged,
        string_agg(o.level, ', ' order by o.level) filter (where not o.unknown) as levels,
        list(o.variable_id order by o.variable_id) filter (where not o.unknown) as shadowed_by
    from scopes p
    join others o using (snapshot_id, name, scope, scope_id)
    where o.variable_id <> p.variable_id
    group by p.snapshot_id, p.variable_id
)
select
    p.snapshot_id, 'variable' as resource_type, p.variable_id as resource_id,
    p.name as resource_name, p.team_id, p.project_id, p.environment_id, p.service_id,
    case when s.shadows > 0 then 'alarm' when s.unjudged > 0 then 'unknown' else 'ok' end
        as status,
    case when s.shadows > 0
        then 'Protected variable ' || p.name || ' is also defined by ' || s.shadows
            || ' other variable(s) in its scope (' || s.levels || ').'
        when s.unjudged > 0
            then 'Protected variable ' || p.name || ' has ' || s.unjudged || ' same-named '
                || 'variable(s) whose values were not collected (redacted), so whether they '
                || 'reference it is unknown: not judged.'
        else 'Protected variable ' || p.name || ' is defined only by its service.'
    end as reason,
    to_json(struct_pack(shadowed_by := coalesce(s.shadowed_by, []),
        not_judged := coalesce(s.unjudged, 0))) as evidence
from protected p
left join shadows s using (snapshot_id, variable_id)
