-- id: VAR005
-- title: Variable reference does not resolve
-- severity: medium
-- area: variables
-- risk: A service reading an unresolved ${{...}} reference gets an empty or literal value and fails, often only at runtime.
-- remediation: Create the referenced variable or fix the reference expression.
-- history: snapshot
with failing as (  -- the few variables with an unresolved reference
    select distinct snapshot_id, level, variable_name, team_id, project_id, environment_id,
        service_id
    from variable_references
    where resolved = false
),
checked as (
    -- whether its variable fails is a column the rows are grouped on: a filter on the
    -- status (the engine keeps alarms and the judged snapshots) then runs before grouping
    select r.*, f.snapshot_id is not null as failing
    from variable_references r
    left join failing f  -- null-safe, like the grouping
        on f.snapshot_id = r.snapshot_id and f.level is not distinct from r.level
        and f.variable_name is not distinct from r.variable_name
        and f.team_id is not distinct from r.team_id
        and f.project_id is not distinct from r.project_id
        and f.environment_id is not distinct from r.environment_id
        and f.service_id is not distinct from r.service_id
),
judged as (
    -- references grouped on their own columns first (narrow keys), named after the join
    select
        snapshot_id, level, variable_name, team_id, project_id, environment_id, service_id,
        failing,
        count(*) as refs, count(*) filter (where resolved) as resolved,
        count(*) filter (where resolved = false) as unresolved,
        -- few references are unresolved: an unordered list of them, sorted by position,
        -- costs far less than an ordered aggregate over every variable
        list_sort(list(struct_pack(position, token, source_type, source_id, key))
            filter (where resolved = false)) as failed
    from checked
    where resolved is not null
    group by all
)
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
from judged r
join owned_variables v
    on v.snapshot_id = r.snapshot_id and v.level = r.level and v.name = r.variable_name
    and v.owner_id = coalesce(r.service_id, r.environment_id, r.project_id, r.team_id)
