-- Each credential of each snapshot with how many resources it lists, and whether its role
-- and scope are known: a viewer, editor or admin role, and access 'all' or 'limited' to
-- listed resources. A limited key lists one or more (platform-api 2.11), so one listing
-- none has an unknown scope, not an empty one. KEY008 reports the unknown ones;
-- credential_reach expands, and KEY003, KEY004 and KEY007 judge, only known ones.
-- inventory_complete: no listing of teams, projects, environments or services failed in the
-- snapshot, so a key's reach holds every resource it has (else a key may reach resources the
-- snapshot lacks: "reaches nothing" is not judged there, only "reaches these" is);
-- variables_complete: that, and no variables call failed either.
create or replace view credential_known as
select c.*, coalesce(l.listed, 0) as listed,
    coalesce(c.role in ('viewer', 'editor', 'admin')
        and (c.access = 'all' or (c.access = 'limited' and l.listed > 0)), false) as known,
    not coalesce(e.unlisted, false) as inventory_complete,
    not coalesce(e.unlisted or e.variables_failed, false) as variables_complete
from credentials as c
left join (
    select snapshot_id, credential_name, count(*) as listed
    from credential_resources group by all
) as l on l.snapshot_id = c.snapshot_id and l.credential_name = c.name
left join (
    select snapshot_id,
        bool_or(endpoint in ('teams.list', 'projects.list', 'environments.list',
            'services.list')) as unlisted,
        bool_or(endpoint = 'variables.list') as variables_failed
    from collection_errors
    where not coalesce(not_visible, false)  -- a 404 for what the key may not see: no failure
    group by snapshot_id
) as e on e.snapshot_id = c.snapshot_id
