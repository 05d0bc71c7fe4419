-- id: KEY005
-- title: API key never expires or expires too far ahead
-- severity: medium
-- area: key-scope
-- risk: A key without a near expiry keeps working long after the person or pipeline that used it has gone, and a leaked copy stays valid.
-- remediation: Recreate the key with an expiry (the platform's default is 90 days) and rotate it before then.
-- history: snapshot
-- param: max_days = 365 | a key with more than this many whole days left before it expires is flagged; the default, a year, flags keys that never expire or expire more than a year ahead (the platform allows up to a year; its default lifetime is 90 days, a stricter limit to set)
with keys as (
    -- whole days left: the one number both the status and the reason use
    select *, floor((epoch(expires_at) - epoch(snapshot_at)) / 86400)::bigint as days_left
    from credentials
    -- an expiry /users/me left out or the parser could not read (or the whole api_key member)
    -- is not "never": KEY008 reports it
    where is_api_key
      and coalesce(len(list_filter(problems, lambda p: regexp_matches(p, '^api_key(\.expires_at)? '))), 0) = 0
)
select
    snapshot_id, 'credential' as resource_type, name as resource_id, name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when expires_at is null or days_left > $max_days then 'alarm' else 'ok' end as status,
    case
        when expires_at is null then 'Key ' || name || ' (' || coalesce(role, 'unknown role') || ') never expires.'
        else 'Key ' || name || ' expires in ' || days_left || ' days (limit ' || $max_days || ').'
    end as reason,
    to_json(struct_pack(key_id, role, created_at, expires_at, days_left)) as evidence
from keys
