-- Each credential of each committed snapshot compared with the last earlier snapshot in which
-- its role and scope were known and every listing answered (compared_with, compared_at; not
-- just the one before: growth while it was unknown, or while a listing failed, would
-- otherwise never show): gained counts the resources of `resources` (those that already
-- existed in the snapshot compared with, where the key reaches more than navigation) on which
-- it now has a right it did not have then (read config, read values, delete), gained_ids
-- lists them. was_there: the key is in an earlier snapshot; known, inventory_complete and
-- incomplete_because as credential_known. KEY007 reads it.
create or replace view credential_reach_growth as
with keys as (  -- each key of each committed snapshot, with its place in the chain
    select k.snapshot_id, k.name, k.role, k.access, k.known, k.inventory_complete,
        k.incomplete_because, s.seq,
        s.snapshot_at, k.known and k.listings_complete as comparable
    from credential_known k
    join snapshots s on s.snapshot_id = k.snapshot_id and s.status in ('complete', 'partial')
),
pairs as (  -- few rows (keys x snapshots): the self-join costs nothing
    select c.snapshot_id, c.name, c.role, c.access, c.known, c.inventory_complete,
        c.incomplete_because, count(b.seq) > 0 as was_there,
        arg_max(b.snapshot_id, b.seq) filter (where b.comparable) as base_id,
        max(b.snapshot_at) filter (where b.comparable) as base_at
    from keys c left join keys b on b.name = c.name and b.seq < c.seq
    where judging(c.snapshot_id)  -- views/judging.sql: the keys judged, with their history
    group by all
),
compared as (  -- the keys compared, and the snapshots whose reach that needs
    select * from pairs where known and base_id is not null
),
reach as materialized (  -- each snapshot's reach once, for both sides of the comparison
    from credential_reach_in((select list(distinct snapshot_id) from (
        select snapshot_id from compared union all select base_id from compared)))
),
now_reach as (  -- rights on resources that already existed then: new ones are not growth
    select r.credential_name, r.snapshot_id, r.resource_id,
        r.can_read_config::int + r.can_read_values::int + r.can_delete::int
            > coalesce(p.can_read_config::int + p.can_read_values::int + p.can_delete::int, 0)
            as gained
    from compared c
    join reach r on r.snapshot_id = c.snapshot_id and r.credential_name = c.name
    join (select snapshot_id, resource_id from all_resources
        where snapshot_id in (select base_id from compared)) as a
        on a.snapshot_id = c.base_id and a.resource_id = r.resource_id
    left join reach p on p.snapshot_id = c.base_id
        and p.credential_name = r.credential_name and p.resource_id = r.resource_id
    where not r.navigable_only
)
select c.snapshot_id, c.name, c.role, c.access, c.was_there, c.known, c.inventory_complete,
    c.incomplete_because, c.base_id as compared_with, c.base_at as compared_at,
    count(n.resource_id) as resources, count(n.resource_id) filter (where n.gained) as gained,
    list(n.resource_id order by n.resource_id) filter (where n.gained) as gained_ids
from pairs c
left join now_reach n on n.snapshot_id = c.snapshot_id and n.credential_name = c.name
group by c.snapshot_id, c.name, c.role, c.access, c.was_there, c.known, c.base_id, c.base_at,
    c.inventory_complete, c.incomplete_because
