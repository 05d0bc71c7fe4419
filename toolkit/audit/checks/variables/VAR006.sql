-- id: VAR006
-- title: Variable references a service that no longer exists
-- severity: medium
-- area: variables
-- risk: A reference to a deleted service resolves to nothing, or to whatever a later service with that id holds; the variable is dead configuration that breaks on the next deploy.
-- remediation: Point the reference at the service that now holds the value, or delete the variable.
-- history: snapshot
with checked as (
    -- only snapshots whose collecting credential sees everything can tell deleted from hidden:
    -- an API key whose access is 'all', or an access token; a key whose access is limited,
    -- or unknown (an `api_key.access` problem), may be hidden from any service. Without a
    -- credentials row (older stores) the collector is taken to see everything.
    -- A reference the platform resolves has its service, listed or not
    -- (a failed listing leaves services out: absent is not deleted there)
    select r.*, not coalesce(k.inventory_complete, true) as unlisted,
        coalesce(r.resolved, false) or exists (select 1 from services s
            where s.snapshot_id = r.snapshot_id and s.id = r.source_id) as source_found
    from variable_references r
    join snapshots sn on sn.snapshot_id = r.snapshot_id
    left join credentials c on c.snapshot_id = r.snapshot_id and c.name = sn.credential_name
    left join collection_coverage k on k.snapshot_id = r.snapshot_id
    where r.source_type = 'service' and r.source_id is not null
      and (c.name is null or c.is_api_key = false or c.access = 'all')
),
failing as (  -- the few variables referencing a service absent from a complete listing
    select distinct snapshot_id, level, variable_name, team_id, project_id, environment_id,
        service_id
    from checked
    where not source_found and not unlisted
),
judged as (
    -- grouped on the references' own columns (narrow keys), named after the join below;
    -- unordered lists sorted afterwards cost far less than ordered aggregates. Whether the
    -- variable fails is a key too: the engine's filter on the status then runs before grouping.
    -- A variable may reference one service several times (its user and its password): the
    -- absent services are listed once each; the ok text counts references (a distinct count
    -- over every variable costs a third more)
    select r.snapshot_id, r.level, r.variable_name, r.team_id, r.project_id, r.environment_id,
        r.service_id, f.snapshot_id is not null as failing,
        count(*) as refs, count(*) filter (where not source_found) > 0 as any_absent,
        list_sort(list_distinct(list(source_id) filter (where not source_found))) as absent,
        list_transform(list_sort(list(struct_pack(position, key))), lambda k: k.key) as keys
    from checked r
    left join failing f  -- null-safe, like the grouping
        on f.snapshot_id = r.snapshot_id and f.level is not distinct from r.level
        and f.variable_name is not distinct from r.variable_name
        and f.team_id is not distinct from r.team_id
        and f.project_id is not distinct from r.project_id
        and f.environment_id is not distinct from r.environment_id
        and f.service_id is not distinct from r.service_id
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
