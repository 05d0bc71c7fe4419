-- Each variable whose value holds a protected variable (services.protected_variables: a
-- database password, a connection URL), per snapshot: the protected variable itself
-- (by_reference false), and each variable whose value holds it through references 1 to 3
-- away (by_reference true; see hop1 below). level and owner say whose variable it is (a
-- team, project, environment or service, by id), variable_name which one; service_id and
-- name, the protected variable it holds. A variable holding one along several paths has a
-- row for each. KEY004 reads it, through credential_protected.
create or replace view protected_holders as
with protected as (
    select distinct snapshot_id, id as service_id, unnest(protected_variables) as name
    from services where len(protected_variables) > 0
),
refs as (  -- each reference giving a value (unresolved: none), from the owner holding it to
    -- the one it names; a level one (${{environment.KEY}}) names the holder's own ancestor
    select snapshot_id, level, coalesce(service_id, environment_id, project_id, team_id) as owner,
        variable_name, source_type, key, coalesce(source_id, case source_type when 'team'
            then team_id when 'project' then project_id when 'environment' then environment_id
            end) as source_id
    from variable_references where resolved is distinct from false
),
-- a value read also returns each reference's resolved value (platform-api 2.8), resolved in
-- turn 3 references deep, as the platform does: walking back from each protected variable,
-- the variables whose value holds it 1, 2 or 3 references away (plain joins: a recursive
-- CTE cost twice as much on a large store)
hop1 as (
    select f.snapshot_id, f.level, f.owner, f.variable_name, p.service_id, p.name
    from refs f join protected p on p.snapshot_id = f.snapshot_id
        and f.source_type = 'service' and p.service_id = f.source_id and p.name = f.key
),
hop2 as (
    select f.snapshot_id, f.level, f.owner, f.variable_name, h.service_id, h.name
    from hop1 h join refs f on f.snapshot_id = h.snapshot_id and f.source_type = h.level
        and f.source_id = h.owner and f.key = h.variable_name
),
holding as (
    from hop1 union all from hop2 union all
    select f.snapshot_id, f.level, f.owner, f.variable_name, h.service_id, h.name
    from hop2 h join refs f on f.snapshot_id = h.snapshot_id and f.source_type = h.level
        and f.source_id = h.owner and f.key = h.variable_name
)
select snapshot_id, 'service' as level, service_id as owner, name as variable_name,
    service_id, name, false as by_reference
from protected
union all
select *, true as by_reference from holding
