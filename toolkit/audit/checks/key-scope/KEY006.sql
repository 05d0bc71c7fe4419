-- id: KEY006
-- title: API key unused for a long time
-- severity: low
-- area: key-scope
-- risk: A key nobody uses is a standing credential with no owner watching it; its leak would go unnoticed.
-- remediation: Revoke the key, or record who needs it and why.
-- history: snapshot
-- param: max_idle_days = 90 | a key unused for more than this many whole days (or never used and created more than that many whole days ago) is flagged
-- Keys are read through /users/me with their own token. A platform that counts that call as
-- a use (the simulator stamps last_used_at before it answers) shows every key the crawl
-- reads as used at the snapshot, so this check can only flag keys whose platform reports
-- the use before the current call; api-facts.md leaves open which one a platform does.
with judged as (
    -- whole days idle: the one number both the status and the reason use
    select *,
        floor((epoch(snapshot_at) - epoch(coalesce(last_used_at, created_at))) / 86400)::bigint as idle_days
    from credentials
    -- a last use /users/me left out or the parser could not read is not "never", and a
    -- never-used key without a creation time has no known age: KEY008 reports both
    where is_api_key and coalesce(last_used_at, created_at) is not null
      and coalesce(len(list_filter(problems, lambda p: starts_with(p, 'api_key.last_used_at '))), 0) = 0
)
select
    snapshot_id, 'credential' as resource_type, name as resource_id, name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when idle_days > $max_idle_days then 'alarm' else 'ok' end as status,
    case
        when last_used_at is null
            then 'Key ' || name || ' was never used; it was created ' || idle_days
                || ' days before the snapshot (limit ' || $max_idle_days || ').'
        else 'Key ' || name || ' was last used ' || idle_days
            || ' days before the snapshot (limit ' || $max_idle_days || ').'
    end as reason,
    to_json(struct_pack(key_id, role, created_at, last_used_at, idle_days)) as evidence
from judged
