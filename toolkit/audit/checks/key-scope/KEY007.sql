-- id: KEY007
-- title: Key reaches more than in the previous snapshot
-- severity: medium
-- area: key-scope
-- risk: A key whose scope or role widened silently (a new listed resource, a role upgrade) now reaches resources nobody reviewed it for.
-- remediation: Review why the key's reach grew and narrow it back if the change was not intended.
-- history: all
-- Each key against the last earlier snapshot that showed its whole scope: see
-- views/credential_reach_growth.sql. Growth seen is an alarm whatever else failed; "no
-- growth" is judged only where the snapshot holds all the key reaches (credential_known).
select
    c.snapshot_id, 'credential' as resource_type, c.name as resource_id, c.name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when c.gained > 0 then 'alarm'
        when not c.was_there then 'ok'
        when not c.known or c.compared_with is null or not c.inventory_complete then 'unknown'
        else 'ok' end as status,
    case
        when c.gained > 0 or (c.was_there and c.known
                and c.compared_with is not null and c.inventory_complete)
            then 'Key ' || c.name || ' gained rights on ' || c.gained || ' of ' || c.resources
                || ' resources that already existed in the snapshot of '
                || strftime(c.compared_at, '%Y-%m-%d %H:%M UTC')
                || ', the last that showed its whole scope.'
        when not c.was_there
            then 'Key ' || c.name || ' is in no earlier snapshot: nothing to compare.'
        when not c.known then 'Cannot compare key ' || c.name || ' with earlier snapshots: '
            || 'its role or scope is unknown in this snapshot (see KEY008).'
        when c.compared_with is null then 'Cannot compare key ' || c.name || ' with earlier '
            || 'snapshots: its role or scope was unknown, or a listing failed, in each one '
            || 'that holds it.'
        else 'Key ' || c.name || ' gained rights on none of the ' || c.resources
            || ' resources collected that already existed in the snapshot of '
            || strftime(c.compared_at, '%Y-%m-%d %H:%M UTC') || ', but ' || c.incomplete_because
            || ', so whether it gained more is not known: not judged.'
    end as reason,
    to_json(struct_pack(role := c.role, access := c.access, compared_with := c.compared_with,
        gained := coalesce(c.gained_ids, [])[1:20])) as evidence
from credential_reach_growth c
