-- id: VAR003
-- title: Plain variable holds a copy of a protected credential
-- severity: high
-- area: variables
-- risk: A copied credential is not rotated with the managed one and leaks wherever the copy is readable.
-- remediation: Replace the copy with a reference ${{service.<id>.NAME}} to the protected variable.
-- history: snapshot
-- param: min_length = 12 | values shorter than this many characters are not compared: protected variables also hold user names, database names, hosts and ports (postgres, localhost, 5432) that any app repeats, while generated credentials are longer
with valued as (  -- one scan for both sides: the plain values, and the protected ones
    select *,
        not coalesce(is_protected, false) and not coalesce(is_reference, false)
            and value_length >= $min_length as plain
    from owned_variables
    where fingerprint is not null
      and (is_protected or (not coalesce(is_reference, false) and value_length >= $min_length))
),
plain as (
    select * from valued where plain
),
copies as (
    select p.snapshot_id, p.variable_id, list(distinct s.variable_id order by s.variable_id) as sources
    from plain p
    join valued s
        on s.snapshot_id = p.snapshot_id and s.fingerprint = p.fingerprint and s.is_protected
    group by all
)
select
    p.snapshot_id, 'variable' as resource_type, p.variable_id as resource_id,
    p.name as resource_name, p.team_id, p.project_id, p.environment_id, p.service_id,
    -- "matches none" needs every protected value: where a variables call failed or answered
    -- 404 (hidden from the collecting key), the one it copies may be among those not seen
    case when c.sources is not null then 'alarm'
        when not coalesce(k.variables_all_seen, true) then 'unknown' else 'ok' end as status,
    case when c.sources is not null
        then 'Variable ' || p.name || ' has the same value as ' || len(c.sources)
            || ' protected variable(s): ' || array_to_string(c.sources, ', ') || '.'
        when not coalesce(k.variables_all_seen, true)
            then 'Variable ' || p.name || ' matches no collected protected variable''s value, but '
                || case when k.variables_complete then 'a variables call answered 404 (hidden '
                    || 'from the collecting key)' else 'a listing or a variables call failed' end
                || ' in this snapshot, so a protected variable it copies may not have been '
                || 'seen: not judged.'
        else 'Variable ' || p.name || ' matches no protected variable''s value.'
    end as reason,
    to_json(struct_pack(level := p.level, value_length := p.value_length,
        copies_of := coalesce(c.sources, []))) as evidence
from plain p
left join copies c using (snapshot_id, variable_id)
left join collection_coverage k using (snapshot_id)
