-- id: VAR006
-- title: Variable references a service that no longer exists
-- severity: medium
-- area: variables
-- risk: A reference to a deleted service resolves to nothing, or to whatever a later service with that id holds; the variable is dead configuration that breaks on the next deploy.
-- remediation: Point the reference at the service that now holds the value, or delete the variable.
with judged as (
    -- only snapshots whose collecting credential sees everything can tell deleted from hidden
    select r.*, v.variable_id,
        exists (select 1 from services s
                where s.snapshot_id = r.snapshot_id and s.id = r.source_id) as source_exists
    from variable_references r
    join variable_items v
        on v.snapshot_id = r.snapshot_id and v.level = r.level and v.name = r.variable_name
        and v.owner_id = coalesce(r.service_id, r.environment_id, r.project_id, r.team_id)
    join snapshots sn on sn.snapshot_id = r.snapshot_id
    left join credentials c on c.snapshot_id = r.snapshot_id and c.name = sn.credential_name
    where r.source_type = 'service' and r.source_id is not null
      and c.access is distinct from 'limited'
)
select
    snapshot_id, 'variable' as resource_type, variable_id as resource_id,
    variable_name as resource_name, team_id, project_id, environment_id, service_id,
    case when bool_and(source_exists) then 'ok' else 'alarm' end as status,
    case when bool_and(source_exists)
        then 'Variable ' || variable_name || ' references ' || count(*) || ' service(s), all present.'
        else 'Variable ' || variable_name || ' references ' || count(*) filter (where not source_exists)
            || ' service(s) absent from the snapshot: '
            || string_agg(source_id, ', ' order by source_id) filter (where not source_exists) || '.'
    end as reason,
    to_json(struct_pack(
        missing_services := coalesce(list(source_id order by source_id)
            filter (where not source_exists), []),
        keys := list(key order by position)
    )) as evidence
from judged
group by 1, 2, 3, 4, 5, 6, 7, 8
