-- id: KEY007
-- title: Key reaches more than in the previous snapshot
-- severity: medium
-- area: key-scope
-- risk: A key whose scope or role widened silently (a new listed resource, a role upgrade, a creator given more access) now reaches resources nobody reviewed it for.
-- remediation: Review why the key's reach grew and narrow it back if the change was not intended.
-- history: previous
with seqs as (
    select snapshot_id, seq, lag(snapshot_id) over (order by seq) as prev_id
    from snapshots where status in ('complete', 'partial')
),
now_reach as (
    -- rights on resources that already existed in the previous snapshot: new resources
    -- appearing under an unchanged scope are not growth
    select r.snapshot_id, r.credential_name, r.resource_id,
        r.can_read_config::int + r.can_read_values::int + r.can_delete::int as rights,
        p.can_read_config::int + p.can_read_values::int + p.can_delete::int as prev_rights
    from credential_reach r
    join seqs s on s.snapshot_id = r.snapshot_id
    join all_resources a on a.snapshot_id = s.prev_id and a.resource_id = r.resource_id
    left join credential_reach p on p.snapshot_id = s.prev_id
        and p.credential_name = r.credential_name and p.resource_id = r.resource_id
    where not r.navigable_only
      and exists (select 1 from credentials c where c.snapshot_id = s.prev_id and c.name = r.credential_name)
)
select
    c.snapshot_id, 'credential' as resource_type, c.name as resource_id, c.name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when count(n.resource_id) filter (where n.rights > coalesce(n.prev_rights, 0)) > 0
        then 'alarm' else 'ok' end as status,
    'Key ' || c.name || ' gained rights on ' || count(n.resource_id) filter (where n.rights > coalesce(n.prev_rights, 0))
        || ' of ' || count(n.resource_id) || ' resources that already existed in the previous snapshot.' as reason,
    to_json(struct_pack(role := c.role, access := c.access,
        gained := coalesce(list(n.resource_id order by n.resource_id)
            filter (where n.rights > coalesce(n.prev_rights, 0)), [])[1:20])) as evidence
from credentials c
join seqs s on s.snapshot_id = c.snapshot_id and s.prev_id is not null
left join now_reach n on n.snapshot_id = c.snapshot_id and n.credential_name = c.name
group by 1, 2, 3, 4, 5, 6, 7, 8, c.role, c.access
