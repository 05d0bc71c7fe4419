-- id: VAR002
-- title: Protected variable name is shadowed at another level
-- severity: medium
-- area: variables
-- risk: A same-named team, project or environment variable (or a sibling's plain copy) gives other services and ${{...}} references a second, unmanaged value of a credential the service manages.
-- remediation: Delete the other definitions and reference the managed one as ${{service.<id>.NAME}}.
-- history: snapshot
select
    p.snapshot_id, 'variable' as resource_type, p.variable_id as resource_id,
    p.name as resource_name, p.team_id, p.project_id, p.environment_id, p.service_id,
    case when p.shadows > 0 then 'alarm'
        when p.unjudged > 0 or b.variable_id is not null
            or not coalesce(k.inventory_complete, true) then 'unknown'
        else 'ok' end as status,
    case when p.shadows > 0
        then 'Protected variable ' || p.name || ' is also defined by ' || p.shadows
            || ' other variable(s) in its scope (' || p.levels || ').'
        when p.unjudged > 0
            then 'Protected variable ' || p.name || ' has ' || p.unjudged || ' same-named '
                || 'variable(s) whose values were not collected (redacted) or whose references '
                || 'could not be followed, so whether they hold a second value is unknown: '
                || 'not judged.'
        when b.variable_id is not null or not coalesce(k.inventory_complete, true)
            then 'Protected variable ' || p.name || ' is defined only by its service among the '
                || 'variables collected, but ' || case when b.failed or not k.inventory_complete
                    then 'a listing or a variables call in its scope failed'
                    else 'a variables call in its scope answered 404 (hidden from the '
                        || 'collecting key)' end
                || ', so a same-named variable may not have been seen: not judged.'
        else 'Protected variable ' || p.name || ' is defined only by its service.'
    end as reason,
    to_json(struct_pack(shadowed_by := p.shadowed_by, not_judged := p.unjudged)) as evidence
-- each protected variable and its shadows: see views/protected_variable_shadows.sql
from protected_variable_shadows p
-- a variables call that failed or answered 404 in its scope: see
-- views/protected_scope_uncollected.sql
left join protected_scope_uncollected b using (snapshot_id, variable_id)
left join collection_coverage k using (snapshot_id)
