-- Each protected service variable (a service's managed credential: level 'service',
-- is_protected), with the same-named variables that give a second, unmanaged value of it in
-- its scope: a team, project or environment variable of its team, project or environment,
-- a plain (unprotected) copy in another service of its environment, or a reference to
-- anything but a managed variable (${{team.OLD_DB_PW}}; ${{service.<id>.NAME}} of a name
-- that service protects is the remediation, no shadow, and so is a team, project or
-- environment variable whose references end there within 3 hops, as the platform resolves
-- them: ${{project.DB_PASSWORD}} holding ${{service.<id>.DB_PASSWORD}}). shadows counts
-- those (shadowed_by their variable_ids, levels their levels); unjudged counts the
-- same-named ones whose value was redacted, or whose reference names an unlisted service or
-- a variable not collected, or was described only in part, so whether they hold a second
-- value is unknown. Both 0 (levels null) where none.
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
named as (  -- references held by variables named like a protected one (few names: only
    -- these can shadow one, so filter before any join)
    select snapshot_id, level, variable_name, team_id, project_id, environment_id, service_id,
        source_type, key, source_type in ('team', 'project', 'environment') as to_level,
        -- the owner of the variable it names (a level one: the holder's own ancestor)
        coalesce(source_id, owner_of(source_type, team_id, project_id, environment_id, null))
            as source_owner
    from variable_references
    where variable_name in (select name from protected)
),
-- A reference to a team, project or environment variable is no second value when that one
-- holds managed variables only, through references of its own: 3 deep from the same-named
-- variable, as the platform resolves them (views/protected_holders.sql). The chain's links:
-- references held by those levels (none on most stores), with, for a service's, whether it
-- names a managed variable (null: the service was not listed)
links as (
    select r.snapshot_id, r.level, owner_of(r.level, r.team_id, r.project_id,
            r.environment_id, null) as owner_id, r.variable_name as name,
        r.source_type in ('team', 'project', 'environment') as to_level, r.source_type,
        coalesce(r.source_id, owner_of(r.source_type, r.team_id, r.project_id,
            r.environment_id, null)) as source_owner, r.key,
        list_contains(s.protected_variables, r.key) as managed
    from variable_references r
    left join services s on r.source_type = 'service'
        and s.snapshot_id = r.snapshot_id and s.id = r.source_id
    where r.level in ('team', 'project', 'environment')
),
level_vars as (  -- the level variables a chain reaches: whether each is a reference
    select v.snapshot_id, v.level, v.owner_id, v.name, v.is_reference
    from owned_variables v
    semi join (
        select snapshot_id, source_type as level, source_owner as owner_id, key as name
        from named where to_level
        union
        select snapshot_id, source_type, source_owner, key from links where to_level
    ) t using (snapshot_id, level, owner_id, name)
    where v.level in ('team', 'project', 'environment')
),
-- whether a level variable holds managed variables only (false: a second value; null: not
-- known): a plain value does not, a redacted one or one not collected is not known, and a
-- reference does when all its references do (false if one is false, else null if one is
-- null), followed no further (last) or one more hop (next)
last as (
    select v.snapshot_id, v.level, v.owner_id, v.name,
        case v.is_reference when false then false when true then h.managed end as managed
    from level_vars v
    left join (
        select snapshot_id, level, owner_id, name,
            if(bool_or(not if(to_level, false, managed)), false,
                if(bool_and(if(to_level, false, managed)), true, null)) as managed
        from links group by all
    ) h using (snapshot_id, level, owner_id, name)
),
next as (
    select v.snapshot_id, v.level, v.owner_id, v.name,
        case v.is_reference when false then false when true then h.managed end as managed
    from level_vars v
    left join (
        select l.snapshot_id, l.level, l.owner_id, l.name,
            if(bool_or(not if(l.to_level, t.managed, l.managed)), false,
                if(bool_and(if(l.to_level, t.managed, l.managed)), true, null)) as managed
        from links l
        left join last t on t.snapshot_id = l.snapshot_id and t.level = l.source_type
            and t.owner_id = l.source_owner and t.name = l.key
        group by all
    ) h using (snapshot_id, level, owner_id, name)
),
refs as (
    -- a reference is no second value only if it points at a managed variable: one a service
    -- protects (its listing's protected_variables), ${{service.<id>.NAME}}, or a team,
    -- project or environment variable holding only such references (next). The few
    -- same-named variables with any other reference: to a level variable with a value of
    -- its own (${{team.OLD_DB_PW}}) or a service's plain one, hold a second value; a service
    -- not listed, a variable redacted or not collected, or a reference the API described
    -- only in part, leaves it unknown
    select snapshot_id, level, variable_name as name, team_id, project_id, environment_id,
        service_id, coalesce(bool_or(not managed), false) as unmanaged
    from (
        select r.*,
            if(r.to_level, t.managed, list_contains(s.protected_variables, r.key)) as managed
        from named r
        left join services s on r.source_type = 'service'
            and s.snapshot_id = r.snapshot_id and s.id = r.source_owner
        left join next t on r.to_level and t.snapshot_id = r.snapshot_id
            and t.level = r.source_type and t.owner_id = r.source_owner and t.name = r.key
    )
    where managed is not true
    group by snapshot_id, level, variable_name, team_id, project_id, environment_id, service_id
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
