-- id: KEY004
-- title: Key can read protected credentials
-- severity: high
-- area: key-scope
-- risk: A key that reads variable values of services with protected variables (database passwords, connection URLs), or of variables referencing them, holds those credentials as well.
-- remediation: Use a viewer key where values are not needed, or limit the key to services without protected variables and without references to them.
-- history: snapshot
with protected as (
    select distinct snapshot_id, id as service_id, unnest(protected_variables) as name
    from services where len(protected_variables) > 0
),
refs as (  -- each reference giving a value (unresolved: none), from the owner holding it to
    -- the one it names; a level one (${{environment.KEY}}) names the holder's own ancestor
    select snapshot_id, level, coalesce(service_id, environment_id, project_id, team_id) as owner,
        variable_name, source_type, key, coalesce(source_id, case source_type when 'team'
            then team_id when 'project' then project_id when 'environment' then environment_id
            end) as source_id
    from variable_references where resolved is distinct from false
),
-- a value read also returns each reference's resolved value (platform-api 2.8), resolved in
-- turn 3 references deep, as the platform does: walking back from each protected variable,
-- the variables whose value holds it 1, 2 or 3 references away (plain joins: a recursive
-- CTE cost twice as much on a large store)
hop1 as (
    select f.snapshot_id, f.level, f.owner, f.variable_name, p.service_id, p.name
    from refs f join protected p on p.snapshot_id = f.snapshot_id
        and f.source_type = 'service' and p.service_id = f.source_id and p.name = f.key
),
hop2 as (
    select f.snapshot_id, f.level, f.owner, f.variable_name, h.service_id, h.name
    from hop1 h join refs f on f.snapshot_id = h.snapshot_id and f.source_type = h.level
        and f.source_id = h.owner and f.key = h.variable_name
),
holding as (
    from hop1 union all from hop2 union all
    select f.snapshot_id, f.level, f.owner, f.variable_name, h.service_id, h.name
    from hop2 h join refs f on f.snapshot_id = h.snapshot_id and f.source_type = h.level
        and f.source_id = h.owner and f.key = h.variable_name
),
readable as (  -- owners (team, project, environment, service) whose values the key reads
    select snapshot_id, credential_name, resource_type, resource_id
    from credential_reach where can_read_values
),
exposed as (
    select r.snapshot_id, r.credential_name, p.service_id, p.name, false as by_reference
    from readable r join protected p on p.snapshot_id = r.snapshot_id
        and r.resource_type = 'service' and p.service_id = r.resource_id
    union all
    select r.snapshot_id, r.credential_name, h.service_id, h.name, true
    from holding h join readable r on r.snapshot_id = h.snapshot_id
        and r.resource_type = h.level and r.resource_id = h.owner
),
per_key as (  -- each protected variable once, "by reference" only when not readable directly
    select snapshot_id, credential_name, count(*) as protected,
        count(*) filter (where by_reference) as by_reference,
        list_sort(list(distinct service_id)) as services
    from (select snapshot_id, credential_name, service_id, name,
            bool_and(by_reference) as by_reference
        from exposed group by all)
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
