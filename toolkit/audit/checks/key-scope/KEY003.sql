-- id: KEY003
-- title: Key with change rights reaches production
-- severity: high
-- area: key-scope
-- risk: An editor or admin key that reaches production can deploy, reconfigure or delete live services; a leak from CI or a laptop becomes a production incident.
-- remediation: Give production its own narrowly limited key, and keep other keys to non-production resources or the viewer role.
-- history: snapshot
select
    c.snapshot_id, 'credential' as resource_type, c.name as resource_id, c.name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    -- reaching none of the resources a snapshot holds, where it may lack some the key
    -- reaches (credential_known.incomplete_because): not judged
    case when count(r.resource_id) > 0 then 'alarm' when not c.inventory_complete then 'unknown'
        else 'ok' end as status,
    case when count(r.resource_id) > 0
        then 'Key ' || c.name || ' (' || c.role || ') may change ' || count(r.resource_id) filter (where r.resource_type = 'environment')
            || ' production environment(s) and ' || count(r.resource_id) filter (where r.resource_type = 'service')
            || ' production service(s).'
        when not c.inventory_complete then 'Key ' || c.name || ' (' || c.role || ') may change '
            || 'nothing in production among the resources collected, but '
            || c.incomplete_because || ', so what it reaches is not known: not judged.'
        else 'Key ' || c.name || ' (' || c.role || ') may change nothing in production.'
    end as reason,
    to_json(struct_pack(role := c.role, access := c.access,
        production_environments := coalesce(list(r.resource_id order by r.resource_id)
            filter (where r.resource_type = 'environment'), [])[1:20],
        production_services := count(r.resource_id) filter (where r.resource_type = 'service'))) as evidence
from credential_known c
left join credential_reach r
    on r.snapshot_id = c.snapshot_id and r.credential_name = c.name
    and r.can_change and r.is_production
-- a key whose role or scope is unknown may reach anything: no row here (KEY008 reports it)
where c.known
group by 1, 2, 3, 4, 5, 6, 7, 8, c.role, c.access, c.inventory_complete,
    c.incomplete_because
