-- id: KEY002
-- title: API key reaches everything its creator can access
-- severity: medium
-- area: key-scope
-- risk: A key with access 'all' grows with its creator's access: every new team, project and service is in reach, far beyond what its task needs.
-- remediation: Limit the key to the teams, projects, environments or services it works on.
select
    c.snapshot_id, 'credential' as resource_type, c.name as resource_id, c.name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when c.access = 'all' then 'alarm' else 'ok' end as status,
    case when c.access = 'all'
        then 'Key ' || c.name || ' (' || coalesce(c.role, 'unknown role')
            || ') has access to all its creator can reach: ' || count(r.resource_id) || ' resources in this snapshot.'
        else 'Key ' || c.name || ' is limited to ' || count(distinct cr.resource_id) || ' listed resource(s).'
    end as reason,
    to_json(struct_pack(access := c.access, role := c.role, reached := count(distinct r.resource_id),
        listed := count(distinct cr.resource_id))) as evidence
from credentials c
left join credential_reach r
    on r.snapshot_id = c.snapshot_id and r.credential_name = c.name and not r.navigable_only
left join credential_resources cr on cr.snapshot_id = c.snapshot_id and cr.credential_name = c.name
where c.access in ('all', 'limited')
group by 1, 2, 3, 4, 5, 6, 7, 8, c.access, c.role
