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
-- verified: 'unknown', not a clean bill.
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
from credential_probes
group by 1, 2, 3, 4, 5, 6, 7, 8
