-- Each credential of each snapshot with how many resources it lists, and whether its role
-- and scope are known: a viewer, editor or admin role, and access 'all' or 'limited' to
-- listed resources. A limited key lists one or more (platform-api 2.11), so one listing
-- none has an unknown scope, not an empty one. KEY008 reports the unknown ones;
-- credential_reach expands, and KEY003, KEY004 and KEY007 judge, only known ones.
-- inventory_complete and variables_complete are the snapshot's (collection_coverage): where a
-- listing failed, a key may reach resources the snapshot lacks, so "reaches nothing" is not
-- judged there, only "reaches these" is.
create or replace view credential_known as
select c.*, coalesce(l.listed, 0) as listed,
    coalesce(c.role in ('viewer', 'editor', 'admin')
        and (c.access = 'all' or (c.access = 'limited' and l.listed > 0)), false) as known,
    coalesce(k.inventory_complete, true) as inventory_complete,
    coalesce(k.variables_complete, true) as variables_complete
from credentials as c
left join (
    select snapshot_id, credential_name, count(*) as listed
    from credential_resources group by all
) as l on l.snapshot_id = c.snapshot_id and l.credential_name = c.name
left join collection_coverage as k on k.snapshot_id = c.snapshot_id
