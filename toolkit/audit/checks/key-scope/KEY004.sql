-- id: KEY004
-- title: Key can read protected credentials
-- severity: high
-- area: key-scope
-- risk: A key that reads variable values of services with protected variables (database passwords, connection URLs), or of variables referencing them, holds those credentials as well.
-- remediation: Use a viewer key where values are not needed, or limit the key to services without protected variables and without references to them.
-- history: snapshot
-- the protected variables each key can read, directly or through references: see
-- views/credential_protected.sql (and views/protected_holders.sql)
with per_key as (
    select snapshot_id, credential_name, count(*) as protected,
        count(*) filter (where by_reference) as by_reference,
        list_sort(list(distinct service_id)) as services
    from credential_protected
    group by all
)
select
    c.snapshot_id, 'credential' as resource_type, c.name as resource_id, c.name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    -- reading none of the protected values a snapshot holds, where it may lack some the key
    -- reads (a failed variables call, or credential_known.incomplete_because): not judged
    case when k.protected > 0 then 'alarm' when not c.variables_complete then 'unknown'
        else 'ok' end as status,
    case when k.protected > 0
        then 'Key ' || c.name || ' (' || c.role || ') can read the values of ' || k.protected
            || ' protected variable(s) in ' || len(k.services) || ' service(s)'
            || case when k.by_reference > 0 then ', ' || k.by_reference
                || ' of them through a reference in a variable it can read.' else '.' end
        when not c.variables_complete then 'Key ' || c.name || ' (' || c.role || ') can read '
            || 'no protected variable among those collected, but '
            || coalesce(c.incomplete_because, 'a variables call failed in this snapshot')
            || ', so what it reads is not known: not judged.'
        else 'Key ' || c.name || ' (' || c.role || ') can read no protected variable.'
    end as reason,
    to_json(struct_pack(role := c.role, service_count := coalesce(len(k.services), 0),
        services := coalesce(k.services, [])[1:20],
        through_reference := coalesce(k.by_reference, 0))) as evidence
from credential_known c
left join per_key k on k.snapshot_id = c.snapshot_id and k.credential_name = c.name
-- a key whose role or scope is unknown may read anything: no row here (KEY008 reports it)
where c.known
