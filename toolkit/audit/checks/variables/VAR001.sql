-- id: VAR001
-- title: Protected variable is missing
-- severity: high
-- area: variables
-- risk: A service that manages a credential it no longer holds fails on its next start, or its users were pointed at a stale copy.
-- remediation: Recreate the service's managed variable (redeploy or reset the service), or remove the name from its protected variables.
-- history: snapshot
with declared as (
    select s.snapshot_id, s.id, s.name, s.team_id, s.project_id, s.environment_id,
        unnest(s.protected_variables) as variable_name
    from services s
    where len(s.protected_variables) > 0
      and not exists (
          select 1 from collection_errors e
          where e.snapshot_id = s.snapshot_id and e.service_id = s.id
            and e.endpoint = 'variables.list')
),
judged as (
    -- a left join (a service's variable names are unique: the table's key) lets DuckDB
    -- hash the few declared names and stream the variables; exists () hashes every variable
    select d.*, v.name is not null as present
    from declared d
    left join variables v
        on v.snapshot_id = d.snapshot_id and v.level = 'service' and v.service_id = d.id
        and v.name = d.variable_name
)
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when bool_and(present) then 'ok' else 'alarm' end as status,
    case when bool_and(present)
        then 'Service ' || coalesce(name, id) || ' holds all ' || count(*) || ' of its protected variables.'
        else 'Service ' || coalesce(name, id) || ' declares ' || count(*) || ' protected variable(s) but '
            || count(*) filter (where not present) || ' have no variable: '
            || string_agg(variable_name, ', ' order by variable_name) filter (where not present) || '.'
    end as reason,
    to_json(struct_pack(
        declared := list(variable_name order by variable_name),
        missing := coalesce(list(variable_name order by variable_name) filter (where not present), [])
    )) as evidence
from judged
group by 1, 2, 3, 4, 5, 6, 7, 8
