-- id: KEY004
-- title: Key can read protected credentials
-- severity: high
-- area: key-scope
-- risk: A key that reads variable values of services with protected variables (database passwords, connection URLs) holds those credentials as well.
-- remediation: Use a viewer key where values are not needed, or limit the key to services without protected variables.
-- history: snapshot
with guarded as (
    select snapshot_id, id, len(protected_variables) as protected
    from services where len(protected_variables) > 0
)
select
    c.snapshot_id, 'credential' as resource_type, c.name as resource_id, c.name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when count(g.id) > 0 then 'alarm' else 'ok' end as status,
    case when count(g.id) > 0
        then 'Key ' || c.name || ' (' || c.role || ') can read the values of ' || sum(g.protected)
            || ' protected variable(s) in ' || count(g.id) || ' service(s).'
        else 'Key ' || c.name || ' (' || c.role || ') can read no protected variable.'
    end as reason,
    to_json(struct_pack(role := c.role, service_count := count(g.id),
        services := coalesce(list(r.resource_id order by r.resource_id)
            filter (where g.id is not null), [])[1:20])) as evidence
from credentials c
left join credential_reach r
    on r.snapshot_id = c.snapshot_id and r.credential_name = c.name
    and r.resource_type = 'service' and r.can_read_values
left join guarded g on g.snapshot_id = r.snapshot_id and g.id = r.resource_id
where c.role in ('viewer', 'editor', 'admin') and c.access in ('all', 'limited')
group by 1, 2, 3, 4, 5, 6, 7, 8, c.role
