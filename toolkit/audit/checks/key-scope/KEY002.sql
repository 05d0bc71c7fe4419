-- id: KEY002
-- title: API key reaches everything its creator can access
-- severity: medium
-- area: key-scope
-- risk: A key with access 'all' grows with its creator's access: every new team, project and service is in reach, far beyond what its task needs.
-- remediation: Limit the key to the teams, projects, environments or services it works on.
-- history: snapshot
-- counted per key before joining: the listed resources joined to every reached one would
-- multiply rows; the reason and the evidence show the same distinct count.
with keys as (
    select distinct snapshot_id, name, access, role,
        coalesce(role in ('viewer', 'editor', 'admin'), false) as role_known
    from credentials
    where access in ('all', 'limited')
),
reach as (
    select snapshot_id, credential_name, count(distinct resource_id) as reached
    from credential_reach
    where not navigable_only
    group by all
),
listing as (
    select snapshot_id, credential_name, count(distinct resource_id) as listed
    from credential_resources
    group by all
)
select
    c.snapshot_id, 'credential' as resource_type, c.name as resource_id, c.name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when c.access = 'all' then 'alarm' else 'ok' end as status,
    case when c.access = 'all'
        then 'Key ' || c.name || ' (' || coalesce(c.role, 'unknown role')
            || ') has access to all its creator can reach'
            || case when c.role_known then ': ' || coalesce(r.reached, 0) || ' resources in this snapshot.'
                -- credential_reach expands no key of unknown role: its count would read 0
                else '; its role is unknown, so the resources it reaches are not counted (see KEY008).'
            end
        else 'Key ' || c.name || ' is limited to ' || coalesce(l.listed, 0) || ' listed resource(s).'
    end as reason,
    to_json(struct_pack(access := c.access, role := c.role,
        reached := case when c.role_known then coalesce(r.reached, 0) end,
        listed := coalesce(l.listed, 0))) as evidence
from keys c
left join reach r on r.snapshot_id = c.snapshot_id and r.credential_name = c.name
left join listing l on l.snapshot_id = c.snapshot_id and l.credential_name = c.name
