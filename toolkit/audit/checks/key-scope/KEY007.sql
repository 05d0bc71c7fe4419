-- id: KEY007
-- title: Key reaches more than in the previous snapshot
-- severity: medium
-- area: key-scope
-- risk: A key whose scope or role widened silently (a new listed resource, a role upgrade, a creator given more access) now reaches resources nobody reviewed it for.
-- remediation: Review why the key's reach grew and narrow it back if the change was not intended.
-- history: previous
with seqs as (
    select snapshot_id, lag(snapshot_id) over (order by seq) as prev_id
    from snapshots where status in ('complete', 'partial')
),
readable as (  -- role and scope known: only then does its reach mean anything
    select snapshot_id, name, known from credential_known
),
pairs as (
    select c.snapshot_id, c.name, c.role, c.access, s.prev_id, p.name is not null as was_there,
        k.known as known_now, coalesce(p.known, false) as known_before
    from credentials c
    join seqs s on s.snapshot_id = c.snapshot_id and s.prev_id is not null
    join readable k on k.snapshot_id = c.snapshot_id and k.name = c.name
    left join readable p on p.snapshot_id = s.prev_id and p.name = c.name
),
now_reach as (  -- rights on resources that already existed before: new ones are not growth
    select r.credential_name, r.snapshot_id, r.resource_id, r.can_read_config::int + r.can_read_values::int
        + r.can_delete::int > coalesce(p.can_read_config::int + p.can_read_values::int + p.can_delete::int, 0) as gained
    from pairs c
    join credential_reach r on r.snapshot_id = c.snapshot_id and r.credential_name = c.name
    join all_resources a on a.snapshot_id = c.prev_id and a.resource_id = r.resource_id
    left join credential_reach p on p.snapshot_id = c.prev_id
        and p.credential_name = r.credential_name and p.resource_id = r.resource_id
    where c.known_now and c.known_before and not r.navigable_only
)
select
    c.snapshot_id, 'credential' as resource_type, c.name as resource_id, c.name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when count(n.resource_id) filter (where n.gained) > 0 then 'alarm'
        when c.was_there and not (c.known_now and c.known_before) then 'unknown'
        else 'ok' end as status,
    case
        when not c.was_there then 'Key ' || c.name || ' was not in the previous snapshot: nothing to compare.'
        when not (c.known_now and c.known_before) then 'Cannot compare key ' || c.name || ' with the previous snapshot: its role or scope is unknown in '
            || case when c.known_now then 'the previous' else 'this' end || ' snapshot (see KEY008).'
        else 'Key ' || c.name || ' gained rights on ' || count(n.resource_id) filter (where n.gained)
            || ' of ' || count(n.resource_id) || ' resources that already existed in the previous snapshot.'
    end as reason,
    to_json(struct_pack(role := c.role, access := c.access, compared := c.known_now and c.known_before,
        gained := coalesce(list(n.resource_id order by n.resource_id) filter (where n.gained), [])[1:20])) as evidence
from pairs c
left join now_reach n on n.snapshot_id = c.snapshot_id and n.credential_name = c.name
group by 1, 2, 3, 4, 5, 6, 7, 8, c.role, c.access, c.was_there, c.known_now, c.known_before
