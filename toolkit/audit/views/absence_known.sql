-- Each snapshot with whether a resource absent from it is absent from the platform
-- (deleted) rather than hidden. sees_all: the collecting credential sees every resource (an
-- access token, or an API key whose access is 'all'; a key whose access is limited, or
-- unknown, may be hidden from any of them: platform-api section 5, rule 6). A snapshot
-- without a credentials row (older stores) is taken to see everything. absent_is_deleted:
-- that, and no listing failed (collection_coverage.inventory_complete: a failed listing
-- leaves out everything below it). VAR006 and VOL002 read it.
create or replace view absence_known as
select sn.snapshot_id,
    c.name is null or coalesce(c.is_api_key = false or c.access = 'all', false) as sees_all,
    coalesce(k.inventory_complete, true) as inventory_complete,
    (c.name is null or coalesce(c.is_api_key = false or c.access = 'all', false))
        and coalesce(k.inventory_complete, true) as absent_is_deleted
from snapshots sn
left join credentials c on c.snapshot_id = sn.snapshot_id and c.name = sn.credential_name
left join collection_coverage k on k.snapshot_id = sn.snapshot_id
