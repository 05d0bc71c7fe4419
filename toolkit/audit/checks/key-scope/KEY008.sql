-- id: KEY008
-- title: Cannot tell the credential's role, scope or lifetime
-- severity: medium
-- area: key-scope
-- risk: A credential whose role, scope, expiry or last use could not be read escapes the other key-scope checks: it may reach anything, never expire or lie unused unnoticed.
-- remediation: Read the problems listed, check the credential in the platform's API key settings, and fix or remove it from the configuration.
-- history: snapshot
with judged as (
    select *,
        -- problems start with the member they are about (toolkit/collect/identity.py)
        coalesce(list_filter(problems, lambda p:
            regexp_matches(p, '^api_key\.(expires_at|last_used_at|created_at) ')), []) as time_problems
    from credential_known
)
select
    snapshot_id, 'credential' as resource_type, name as resource_id, name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when known and len(time_problems) = 0 then 'ok' else 'alarm' end as status,
    case
        when known and len(time_problems) > 0 then 'Cannot tell the lifetime of key ' || name
            || ' (' || role || ' role, ' || access || ' access): ' || array_to_string(time_problems, '; ') || '.'
        when known then 'Key ' || name || ' has the ' || role || ' role and ' || access || ' access'
            || case when access = 'limited' then ' to ' || listed || ' listed resource(s).' else '.' end
        when is_api_key = false then 'Cannot tell the scope of credential ' || name
            || ': it is an access token, not an API key, so /users/me gives it no role or scope.'
        else 'Cannot tell the scope of credential ' || name || ': role ' || coalesce(role, 'unknown')
            || ', access ' || coalesce(access, 'unknown') || ', ' || listed || ' listed resource(s)'
            || coalesce('; ' || nullif(array_to_string(problems, '; '), ''), '') || '.'
    end as reason,
    to_json(struct_pack(is_api_key, role, access, listed, problems)) as evidence
from judged
