-- id: KEY003
-- title: Key with change rights reaches production
-- severity: high
-- area: key-scope
-- risk: An editor or admin key that reaches production can deploy, reconfigure or delete live services; a leak from CI or a laptop becomes a production incident.
-- remediation: Give production its own narrowly limited key, and keep other keys to non-production resources or the viewer role.
-- history: snapshot
-- Not judged ('unknown'), where nothing alarms: a key reaching none of the resources a
-- snapshot holds, where it may lack some the key reaches (credential_known.incomplete_because),
-- or one that may change an environment whose name is not reported, or a service in one
-- (all_resources.is_production null: production or not, nothing tells).
with reach as (
    select c.snapshot_id, c.name, c.role, c.access, c.inventory_complete, c.incomplete_because,
        list(r.resource_id order by r.resource_id) filter (where r.resource_type = 'environment'
            and r.is_production) as environments,
        count(r.resource_id) filter (where r.resource_type = 'service' and r.is_production) as services,
        count(distinct r.environment_id) filter (where r.is_production is null) as unnamed
    from credential_known c
    left join credential_reach r on r.snapshot_id = c.snapshot_id and r.credential_name = c.name
        and r.can_change and r.is_production is not false
    -- a key whose role or scope is unknown may reach anything: no row here (KEY008 reports it)
    where c.known
    group by all
)
select
    snapshot_id, 'credential' as resource_type, name as resource_id, name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when len(environments) > 0 or services > 0 then 'alarm'
        when unnamed > 0 or not inventory_complete then 'unknown' else 'ok' end as status,
    case when len(environments) > 0 or services > 0
        then 'Key ' || name || ' (' || role || ') may change ' || coalesce(len(environments), 0)
            || ' production environment(s) and ' || services || ' production service(s).'
        when unnamed > 0 then 'Key ' || name || ' (' || role || ') may change resources in '
            || unnamed || ' environment(s) whose name is not reported, so whether they are '
            || 'production is not known: not judged.'
        when not inventory_complete then 'Key ' || name || ' (' || role || ') may change '
            || 'nothing in production among the resources collected, but '
            || incomplete_because || ', so what it reaches is not known: not judged.'
        else 'Key ' || name || ' (' || role || ') may change nothing in production.'
    end as reason,
    to_json(struct_pack(role := role, access := access,
        production_environments := coalesce(environments, [])[1:20],
        production_services := services, environments_without_name := unnamed)) as evidence
from reach
