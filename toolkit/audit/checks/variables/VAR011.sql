-- id: VAR011
-- title: Variable's value is a recognisable secret
-- severity: high
-- area: variables
-- risk: A JSON Web Token, a private key or a live provider token in a variable no one named as a secret (CONFIG, NOTES) escapes every check that judges names, is readable by every key that reads the variable, and is copied with it; a protected variable is where it belongs (the service guards it), so only unprotected ones are flagged.
-- remediation: Move the secret into a protected variable of the service that uses it (or a secret manager), reference it from there, and rotate it: it has been readable where it was.
-- history: snapshot
select
    snapshot_id, 'variable' as resource_type, variable_id as resource_id, name as resource_name,
    team_id, project_id, environment_id, service_id,
    -- value_kind is recognised at collection (toolkit/snapshot/secret_kinds.py); 'none' when
    -- the value was read and is no secret's form; null when it was not read
    case when coalesce(is_protected, false) then 'ok' when value_kind is null then 'unknown'
        when value_kind = 'none' then 'ok' else 'alarm' end as status,
    case
        when coalesce(is_protected, false)
            then concat('Variable ', name, ' is protected by its service, where a secret belongs.')
        when value_kind is null
            then concat('Variable ', name, ' (', level, ' level): its value was ',
                if(values_redacted, 'redacted', 'not collected'),
                ', so whether it is a recognisable secret is unknown: not judged.')
        when value_kind = 'none'
            then concat('Variable ', name, ' holds no value in a recognisable secret''s form.')
        else concat('Variable ', name, ' (', level, ' level, not protected) holds a secret ',
            'recognised by its value: ', replace(value_kind, '_', ' '), '.')
    end as reason,
    to_json(struct_pack(level, value_kind, is_protected, value_length, values_redacted))
        as evidence
from owned_variables
-- a value read before schema version 5 was not judged at collection (value_kind is null,
-- its length known): no row, as for a check that did not exist then
where value_kind is not null or value_length is null
