-- id: KEY007
-- title: Key reaches more than in the previous snapshot
-- severity: medium
-- area: key-scope
-- risk: A key whose scope or role widened silently (a new listed resource, a role upgrade) now reaches resources nobody reviewed it for.
-- remediation: Review why the key's reach grew and narrow it back if the change was not intended.
-- history: all
-- A key is compared with the last earlier snapshot in which its role and scope were known and
-- every listing answered (not just the one before: growth while it was unknown, or while a
-- listing failed, would otherwise never show). Growth seen is an alarm whatever else failed;
-- "no growth" is judged only where the snapshot holds all the key reaches (credential_known).
with keys as (  -- each key of each committed snapshot, with its place in the chain
    select k.snapshot_id, k.name, k.role, k.access, k.known, k.inventory_complete,
        k.incomplete_because, s.seq,
        s.snapshot_at, k.known and coalesce(v.inventory_complete, true) as comparable
    from credential_known k
    join snapshots s on s.snapshot_id = k.snapshot_id and s.status in ('complete', 'partial')
    left join collection_coverage v on v.snapshot_id = k.snapshot_id
),
pairs as (  -- few rows (keys x snapshots): the self-join costs nothing
    select c.snapshot_id, c.name, c.role, c.access, c.known, c.inventory_complete,
        c.incomplete_because, count(b.seq) > 0 as was_there,
        arg_max(b.snapshot_id, b.seq) filter (where b.comparable) as base_id,
        max(b.snapshot_at) filter (where b.comparable) as base_at
    from keys c left join keys b on b.name = c.name and b.seq < c.seq
    group by all
),
now_reach as (  -- rights on resources that already existed then: new ones are not growth
    select r.credential_name, r.snapshot_id, r.resource_id, r.can_read_config::int + r.can_read_values::int
        + r.can_delete::int > coalesce(p.can_read_config::int + p.can_read_values::int + p.can_delete::int, 0) as gained
    from pairs c
    join credential_reach r on r.snapshot_id = c.snapshot_id and r.credential_name = c.name
    join all_resources a on a.snapshot_id = c.base_id and a.resource_id = r.resource_id
    left join credential_reach p on p.snapshot_id = c.base_id
        and p.credential_name = r.credential_name and p.resource_id = r.resource_id
    where c.known and c.base_id is not null and not r.navigable_only
)
select
    c.snapshot_id, 'credential' as resource_type, c.name as resource_id, c.name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when count(n.resource_id) filter (where n.gained) > 0 then 'alarm'
        when not c.was_there then 'ok'
        when not c.known or c.base_id is null or not c.inventory_complete then 'unknown'
        else 'ok' end as status,
    case
        when count(n.resource_id) filter (where n.gained) > 0 or (c.was_there and c.known
                and c.base_id is not null and c.inventory_complete)
            then 'Key ' || c.name || ' gained rights on ' || count(n.resource_id) filter (where n.gained)
                || ' of ' || count(n.resource_id) || ' resources that already existed in the snapshot of '
                || strftime(c.base_at, '%Y-%m-%d %H:%M UTC') || ', the last that showed its whole scope.'
        when not c.was_there then 'Key ' || c.name || ' is in no earlier snapshot: nothing to compare.'
        when not c.known then 'Cannot compare key ' || c.name || ' with earlier snapshots: its role '
            || 'or scope is unknown in this snapshot (see KEY008).'
        when c.base_id is null then 'Cannot compare key ' || c.name || ' with earlier snapshots: '
            || 'its role or scope was unknown, or a listing failed, in each one that holds it.'
        else 'Key ' || c.name || ' gained rights on none of the ' || count(n.resource_id)
            || ' resources collected that already existed in the snapshot of '
            || strftime(c.base_at, '%Y-%m-%d %H:%M UTC') || ', but ' || c.incomplete_because
            || ', so whether it gained more is not known: not judged.'
    end as reason,
    to_json(struct_pack(role := c.role, access := c.access, compared_with := c.base_id,
        gained := coalesce(list(n.resource_id order by n.resource_id) filter (where n.gained), [])[1:20])) as evidence
from pairs c
left join now_reach n on n.snapshot_id = c.snapshot_id and n.credential_name = c.name
group by 1, 2, 3, 4, 5, 6, 7, 8, c.role, c.access, c.was_there, c.known, c.base_id, c.base_at, c.inventory_complete,
    c.incomplete_because
