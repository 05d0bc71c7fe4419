-- id: KEY009
-- title: Key's effective scope differs from its claimed scope
-- severity: high
-- area: key-scope
-- risk: A key that sees resources outside the scope /users/me claims (or misses ones inside it) makes every other key-scope finding wrong: the real exposure is unknown.
-- remediation: Recreate the key with the intended scope. A key that sees less than it claims may have a creator with less access (a key never has more than its creator); otherwise report the difference to the platform. Until then treat the key as reaching what it was seen to reach.
-- history: snapshot
-- Rows exist only for snapshots collected in verified mode ([collect] verify_scope, or
-- `snapshot --verify-scope`; CrawlOptions(verify_scope=True) from Python). A key none
-- of whose probes could be judged (each failed, or its expected answer is unknown) was not
-- verified: 'unknown', not a clean bill. Access 'all' is what the key's creator can access
-- (platform-api 2.11), known only where that is the collecting credential's user: the
-- probes of another user's key (or one whose user is not known) are not judged, as the
-- collector records them since; stores written before hold them as matches and mismatches.
with probes as (
    select p.* exclude (status), coalesce(k.user_id, 'not known') as creator,
        coalesce(c.user_id, 'not known') as collector,
        k.access = 'all' and not coalesce(k.user_id = c.user_id, false) as other_user,
        if(other_user and p.status <> 'error', 'unknown', p.status) as status
    from credential_probes p join snapshots sn on sn.snapshot_id = p.snapshot_id
    left join credentials k on k.snapshot_id = p.snapshot_id and k.name = p.credential_name
    left join credentials c on c.snapshot_id = p.snapshot_id and c.name = sn.credential_name
)
select
    snapshot_id, 'credential' as resource_type, credential_name as resource_id,
    credential_name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when count(*) filter (where status = 'mismatch') > 0 then 'alarm'
        when count(*) filter (where status = 'match') = 0 then 'unknown' else 'ok' end as status,
    case when count(*) filter (where status = 'mismatch') > 0
        then 'Key ' || credential_name || ' saw ' || count(*) filter (where status = 'mismatch' and observed_visible)
            || ' resource(s) outside its claimed scope and missed '
            || count(*) filter (where status = 'mismatch' and not observed_visible)
            || ' inside it, of ' || count(*) || ' probed.'
            || if(count(*) filter (where status = 'mismatch' and not observed_visible) > 0,
                ' A key never has more access than its creator: one whose creator lost access'
                    || ' misses resources inside its claim.', '')
        when bool_or(other_user) then 'Key ' || credential_name || ' was not verified: its '
            || 'access is all its creator (user ' || any_value(creator) || ') can access, which '
            || 'the snapshot shows only for the user who collected it (user '
            || any_value(collector) || '); ' || count(*) || ' probe(s) not judged.'
        when count(*) filter (where status = 'match') = 0
            then 'Key ' || credential_name || ' was not verified: none of its ' || count(*)
                || ' probe(s) could be judged (' || count(*) filter (where status = 'error')
                || ' failed).'
        else 'Key ' || credential_name || ' saw exactly its claimed scope on '
            || count(*) filter (where status = 'match') || ' probed resource(s); '
            || count(*) filter (where status in ('error', 'unknown')) || ' more could not be judged.'
    end as reason,
    to_json(struct_pack(
        probed := count(*),
        seen_outside := coalesce(list(resource_type || ':' || resource_id order by resource_id)
            filter (where status = 'mismatch' and observed_visible), []),
        hidden_inside := coalesce(list(resource_type || ':' || resource_id order by resource_id)
            filter (where status = 'mismatch' and not observed_visible), []),
        errors := count(*) filter (where status = 'error'))) as evidence
from probes
group by 1, 2, 3, 4, 5, 6, 7, 8
