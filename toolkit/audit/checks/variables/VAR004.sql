-- id: VAR004
-- title: Secret stored as a plain variable
-- severity: high
-- area: variables
-- risk: A secret typed into a plain variable is readable by every editor key, copied by hand between environments and never rotated with its source.
-- remediation: Keep the secret where it is managed (a protected variable of the owning service) and reference it with ${{...}}.
-- history: snapshot
-- param: secret_names = {SECRET_NAMES} | comma-separated regular expressions (case-insensitive); a variable name matching any of them, and none of not_secret_names, looks like a secret (DB_PASS, DBPWD and APP_KEY do); the default is toolkit/snapshot/secret_names.py's, which the free-text scrubber also reads (`platform-audit checks --check VAR004` shows it)
-- param: not_secret_names = {NOT_SECRET_NAMES} | comma-separated regular expressions (case-insensitive); a name matching one is no secret's name even if it matches secret_names: a setting about a secret (its id, name, file, path, length or lifetime, or where it is fetched or sent: OAUTH_TOKEN_URL, TOKEN_ENDPOINT, API_KEY_HEADER; a password inside a URL is VAR010's), GOOGLE_APPLICATION_CREDENTIALS (a file path), the shell's PWD and OLDPWD
select
    snapshot_id, 'variable' as resource_type, variable_id as resource_id, name as resource_name,
    team_id, project_id, environment_id, service_id,
    -- a redacted value (viewer key) hides whether it is a reference: not judged, and VAR009
    -- reports the redaction
    case when not coalesce(is_protected, false) and is_reference = false then 'alarm'
        when not coalesce(is_protected, false) and is_reference is null then 'unknown'
        else 'ok' end as status,
    case
        when coalesce(is_protected, false)
            then 'Variable ' || name || ' looks like a secret and is protected by its service.'
        when coalesce(is_reference, false)
            then 'Variable ' || name || ' looks like a secret and references ' || reference_count
                || ' other variable(s) instead of holding a value.'
        when is_reference is null
            then 'Variable ' || name || ' (' || level || ' level) looks like a secret and is not '
                || 'protected, but its value was '
                || case when values_redacted then 'redacted' else 'not collected' end
                || ', so whether it is a plain value or a reference is unknown: not judged.'
        else 'Variable ' || name || ' (' || level || ' level) looks like a secret but holds a plain '
            || coalesce(value_length::varchar || '-character ', '') || 'value.'
    end as reason,
    to_json(struct_pack(level, is_protected, is_reference, value_length, values_redacted)) as evidence
from owned_variables
where secret_name(name, $secret_names, $not_secret_names)
