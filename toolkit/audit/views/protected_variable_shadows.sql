-- Each protected service variable (a service's managed credential: level 'service',
-- is_protected), with the same-named variables that give a second, unmanaged value of it in
-- its scope: a team, project or environment variable of its team, project or environment,
-- a plain (unprotected) copy in another service of its environment, or a reference to
-- anything but a managed variable (${{team.OLD_DB_PW}}; ${{service.<id>.NAME}} of a name
-- that service protects is the remediation, no shadow). shadows counts those (shadowed_by
-- their variable_ids, levels their levels); unjudged counts the same-named ones whose value
-- was redacted, or whose reference names an unlisted service or was described only in part,
-- so whether they hold a second value is unknown. Both 0 (levels null) where none.
-- Whether a failed or hidden variables call may have left one out:
-- protected_scope_uncollected. VAR002 reads it.
create or replace view protected_variable_shadows as
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
refs as (
    -- a reference is no second value only if it points at a managed variable: one a service
    -- protects (its listing's protected_variables), ${{service.<id>.NAME}}. The few same-named
    -- variables with any other reference: a team, project or environment variable
    -- (${{team.OLD_DB_PW}}) or a service's plain one is a second value; a service not listed,
    -- or a reference the API described only in part, leaves it unknown
    select r.snapshot_id, r.level, r.variable_name as name, r.team_id, r.project_id,
        r.environment_id, r.service_id,
        coalesce(bool_or(r.source_type in ('team', 'project', 'environment')
            or not list_contains(s.protected_variables, r.key)), false) as unmanaged
    from variable_references r
    left join services s on r.source_type = 'service'
        and s.snapshot_id = r.snapshot_id and s.id = r.source_id
    where list_contains((select list(distinct name) from protected), r.variable_name)
      and not coalesce(r.source_type = 'service' and list_contains(s.protected_variables, r.key),
          false)
    group by all
),
others as (  -- variables that may shadow one: service-level ones act in their environment
    select snapshot_id, variable_id, name, level,
        case level when 'service' then 'environment' else level end as scope,
        case level when 'team' then team_id when 'project' then project_id
            else environment_id end as scope_id,
        -- a value that was redacted may be the reference the remediation asks for
        is_reference is null as unknown
    from owned_variables
    -- references are judged above (refs)
    where is_reference is not true
      and (level in ('team', 'project', 'environment')
           or (level = 'service' and not coalesce(is_protected, false)))
      -- few names are protected: only variables named like one can shadow one (a list
      -- test per row, where a semi join would hash every candidate)
      and list_contains((select list(distinct name) from protected), name)
    union all
    select r.snapshot_id,
        variable_key(r.level, owner_of(r.level, r.team_id, r.project_id, r.environment_id,
            r.service_id), r.name), r.name, r.level,
        case r.level when 'service' then 'environment' else r.level end,
        case r.level when 'team' then r.team_id when 'project' then r.project_id
            else r.environment_id end,
        not r.unmanaged
    from refs r
    -- a protected variable's own references are no shadow (as its plain value is none)
    left join protected q on q.snapshot_id = r.snapshot_id and r.level = 'service'
        and q.service_id = r.service_id and q.name = r.name
    where q.variable_id is null
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
select p.*, coalesce(s.shadows, 0) as shadows, coalesce(s.unjudged, 0) as unjudged, s.levels,
    coalesce(s.shadowed_by, []) as shadowed_by
from protected p
left join shadows s using (snapshot_id, variable_id)
