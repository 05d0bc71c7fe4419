-- id: VAR006
-- title: Variable references a service that no longer exists
-- severity: medium
-- area: variables
-- risk: A reference to a deleted service resolves to nothing, or to whatever a later service with that id holds; the variable is dead configuration that breaks on the next deploy.
-- remediation: Point the reference at the service that now holds the value, or delete the variable.
-- history: snapshot
with judged as (
    -- grouped on the references' own columns (narrow keys), named after the join below;
    -- unordered lists sorted afterwards cost far less than ordered aggregates. Whether the
    -- variable fails is a key too: the engine's filter on the status then runs before grouping.
    -- A variable may reference one service several times (its user and its password): the
    -- absent services are listed once each; the ok text counts references (a distinct count
    -- over every variable costs a third more)
    select r.snapshot_id, r.level, r.variable_name, r.team_id, r.project_id, r.environment_id,
        r.service_id, r.failing,
        count(*) as refs, count(*) filter (where not source_found) > 0 as any_absent,
        list_sort(list_distinct(list(source_id) filter (where not source_found))) as absent,
        list_transform(list_sort(list(struct_pack(position, key))), lambda k: k.key) as keys
    -- references to services, found or not, and whether their variable fails: see
    -- views/references_to_services.sql
    from references_to_services r
    group by all
)
select
    r.snapshot_id, 'variable' as resource_type, v.variable_id as resource_id,
    r.variable_name as resource_name, r.team_id, r.project_id, r.environment_id, r.service_id,
    case when r.failing then 'alarm' when r.any_absent then 'unknown' else 'ok' end
        as status,
    case
        when not r.any_absent
            then 'Variable ' || r.variable_name || ' has ' || r.refs
                || ' reference(s) to services, each listed or resolved by the platform.'
        when r.failing
            then 'Variable ' || r.variable_name || ' references ' || len(r.absent)
                || ' service(s) absent from the snapshot: ' || array_to_string(r.absent, ', ') || '.'
        else 'Variable ' || r.variable_name || ' references ' || len(r.absent)
            || ' service(s) absent from a snapshot whose service listing failed, so not judged: '
            || array_to_string(r.absent, ', ') || '.'
    end as reason,
    to_json(struct_pack(
        missing_services := case when r.failing then coalesce(r.absent, []) else [] end,
        not_judged := case when r.failing then [] else coalesce(r.absent, []) end,
        keys := r.keys)) as evidence
from judged r
join owned_variables v
    on v.snapshot_id = r.snapshot_id and v.level = r.level and v.name = r.variable_name
    and v.owner_id = coalesce(r.service_id, r.environment_id, r.project_id, r.team_id)
