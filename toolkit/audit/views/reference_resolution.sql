-- Each variable holding ${{...}} references, per snapshot, with how many the platform
-- resolved: refs (those it judged: resolved true or false), resolved, unresolved, failed (the
-- unresolved ones: position, token, source_type, source_id, key, sorted by position) and
-- failing (any unresolved), on the referencing variable's own columns (level, variable_name
-- and owner ids; variable_id is joined by the reader, on owned_variables). VAR005 reads it.
create or replace view reference_resolution as
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
)
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
