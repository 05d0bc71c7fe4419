-- Each credential of each snapshot with how many resources it lists, and whether its role
-- and scope are known: a viewer, editor or admin role, and access 'all' or 'limited' to
-- listed resources. A limited key lists one or more (platform-api 2.11), so one listing
-- none has an unknown scope, not an empty one; so has one whose resources /users/me gave
-- in a shape the collector could not read whole (an entry of an unknown type, or without a
-- type and id: its `api_key.resources` problems). KEY008 reports the unknown ones;
-- credential_reach expands, and KEY003, KEY004 and KEY007 judge, only known ones.
-- inventory_complete: the snapshot holds every resource the key reaches, so "reaches
-- nothing" can be judged there ("reaches these" always can). Not so where a listing failed
-- (collection_coverage), where the collecting key is limited (or its kind or access is
-- unknown) and the audited key is another one (the snapshot is that key's part of the
-- platform; platform-api section 5, rule 6; an access token sees all its user does), or
-- where a resource the key lists is not in the snapshot (outside the collector's view):
-- incomplete_because says which. variables_complete: that, and no variables call failed.
-- credential_roles: the credentials with listed and known alone, which need no inventory
-- (credential_reach reads it); credential_known adds the rest. listings_complete: no listing
-- of the inventory failed in the snapshot (collection_coverage).
create or replace view credential_roles as
with listed as (
    select snapshot_id, credential_name, count(*) as listed,
        count(*) filter (where resource_type not in ('team', 'project', 'environment',
            'service')) as odd_types
    from credential_resources
    group by all
)
select c.*, coalesce(l.listed, 0) as listed,
    coalesce(c.role in ('viewer', 'editor', 'admin')
        and (c.access = 'all' or (c.access = 'limited' and l.listed > 0
            and l.odd_types = 0))
        and len(list_filter(coalesce(c.problems, []),
            lambda p: starts_with(p, 'api_key.resources '))) = 0, false) as known
from credentials as c
left join listed as l on l.snapshot_id = c.snapshot_id and l.credential_name = c.name;
create or replace view credential_known as
with unmatched as (  -- the resources each key lists that the snapshot does not hold
    select cr.snapshot_id, cr.credential_name, count(*) as unmatched
    from credential_resources as cr
    anti join all_resources as r on r.snapshot_id = cr.snapshot_id
        and r.resource_type = cr.resource_type and r.resource_id = cr.resource_id
    group by all
),
judged as (
    select c.*,
        case
            when not coalesce(k.inventory_complete, true)
                then 'a listing failed in this snapshot'
            -- an access token (is_api_key false) acts with its user's full rights, as an
            -- API key whose access is 'all' does; a collector not recorded, or whose kind
            -- or access is unknown, may see only part
            when sn.credential_name is not null and sn.credential_name <> c.name
                and not coalesce(collector.is_api_key = false or collector.access = 'all', false)
                then 'the snapshot was collected with key ' || sn.credential_name
                    || ', which sees only part of the platform'
            when coalesce(u.unmatched, 0) > 0
                then u.unmatched || ' of the resources it lists are not in the snapshot'
        end as incomplete_because,
        coalesce(k.inventory_complete, true) as listings_complete,
        coalesce(k.variables_complete, true) as variables_collected
    from credential_roles as c
    left join unmatched as u on u.snapshot_id = c.snapshot_id and u.credential_name = c.name
    left join collection_coverage as k on k.snapshot_id = c.snapshot_id
    left join snapshots as sn on sn.snapshot_id = c.snapshot_id
    left join credentials as collector
        on collector.snapshot_id = c.snapshot_id and collector.name = sn.credential_name
)
select * exclude (variables_collected),
    incomplete_because is null as inventory_complete,
    incomplete_because is null and variables_collected as variables_complete
from judged
