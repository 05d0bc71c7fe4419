-- id: VAR010
-- title: Credential written into a variable's value
-- severity: high
-- area: variables
-- risk: A password or token typed into a value, such as a connection string whose host is a reference (postgres://app:<password>@${{service.db.HOST}}), is readable by every key that reads the variable, copied with it, and never rotated with the secret it copies. VAR004 judges names; this judges values.
-- remediation: Keep the credential in a protected variable of the service that owns it and reference it: postgres://app:${{service.db.DB_PASSWORD}}@${{service.db.HOST}}.
-- history: snapshot
select
    snapshot_id, 'variable' as resource_type, variable_id as resource_id, name as resource_name,
    team_id, project_id, environment_id, service_id,
    -- a protected variable is where a credential belongs; a value not read (redacted for a
    -- viewer key, or not text) is not judged
    case when coalesce(is_protected, false) then 'ok' when writes_credential then 'alarm'
        when not writes_credential then 'ok' else 'unknown' end as status,
    case
        when coalesce(is_protected, false)
            then concat('Variable ', name,
                ' is protected by its service, where a credential belongs.')
        when writes_credential
            then concat('Variable ', name, ' (', level,
                ' level) writes a credential into its value',
                if(reference_count > 0, concat(' beside ', reference_count, ' reference(s)'), ''),
                ': a password in a URL, a Bearer or Basic credential, or a password=... pair.')
        when not writes_credential
            then concat('Variable ', name, ' writes no credential into its value.')
        else concat('Variable ', name, ' (', level, ' level): its value was ',
            if(values_redacted, 'redacted', 'not collected'),
            ', so whether it writes a credential is unknown: not judged.')
    end as reason,
    to_json(struct_pack(level, is_protected, is_reference, reference_count, value_length,
        values_redacted)) as evidence
from owned_variables
-- a value read before schema version 4 was not judged at collection (writes_credential is
-- null, its length known): no row, as for a check that did not exist then
where writes_credential is not null or value_length is null
