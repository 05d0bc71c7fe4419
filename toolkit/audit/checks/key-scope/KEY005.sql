-- id: KEY005
-- title: API key never expires or expires too far ahead
-- severity: medium
-- area: key-scope
-- risk: A key without a near expiry keeps working long after the person or pipeline that used it has gone, and a leaked copy stays valid.
-- remediation: Recreate the key with an expiry (the platform's default is 90 days) and rotate it before then.
-- history: snapshot
-- param: max_days = 365 | a key expiring more than this many days after the snapshot is flagged
select
    snapshot_id, 'credential' as resource_type, name as resource_id, name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when expires_at is null or expires_at > snapshot_at + to_days($max_days)
        then 'alarm' else 'ok' end as status,
    case
        when expires_at is null then 'Key ' || name || ' (' || coalesce(role, 'unknown role') || ') never expires.'
        else 'Key ' || name || ' expires in ' || date_diff('day', snapshot_at, expires_at)
            || ' days (limit ' || $max_days || ').'
    end as reason,
    to_json(struct_pack(key_id, role, created_at, expires_at,
        days_left := date_diff('day', snapshot_at, expires_at))) as evidence
from credentials
-- an expiry /users/me left out or the parser could not read is not "never": KEY008 reports it
where is_api_key
  and coalesce(len(list_filter(problems, lambda p: starts_with(p, 'api_key.expires_at '))), 0) = 0
