-- Each variable of an environment that holds a secret value, with the variables of the
-- other kind of environment (production or not: all_resources.is_production) holding the
-- same value in the same snapshot. A secret is a value, not itself a reference, of at least
-- min_length characters (compared by fingerprint, never read), of a protected variable or
-- of one whose name is in names. A variable holds its own, and those it references out of
-- its environment (references_out.sql: staging's ${{service.<production database>.URL}});
-- via lists the tokens of those references, sorted (empty for its own value). matches
-- counts the variables of the other kind holding one of its secrets (0 where none),
-- referencing those of them holding it through a reference; environments names their
-- environments, ids lists their variable_ids. A table macro, as which names are secrets'
-- is the calling check's choice: VAR007 passes the names its secret_names and
-- not_secret_names parameters match (secret_name.sql) and its min_length, as
-- from secret_holders(12, (select list(distinct name) from variables where secret_name(...))).
create or replace macro secret_holders(min_length, names) as table
with valued as (  -- secrets' values as fingerprints, long enough to compare
    select * from variable_items
    where fingerprint is not null and value_length >= min_length
      and not coalesce(is_reference, false)
      -- a hash lookup among the few names (list_contains(names, name) on the caller's
      -- subquery is planned as a nested-loop join over every row)
      and (coalesce(is_protected, false) or name in (select unnest(names)))
),
held as (
    -- A variable referencing a secret out of its environment holds it too: staging's
    -- ${{service.<production database>.DATABASE_URL}}, or production's and staging's
    -- ${{project.API_TOKEN}} (views/references_out.sql)
    select o.*, s.fingerprint
    from references_out as o
    join valued as s on s.snapshot_id = o.snapshot_id and s.variable_id = o.source_variable_id
    where o.is_production is not null
),
holders as (  -- each variable once: one with a value of its own, or one referencing secrets
    select snapshot_id, variable_id, name, team_id, project_id, environment_id, service_id,
        is_production, environment_name, []::varchar[] as via
    from valued
    where is_production is not null
    union all
    select snapshot_id, variable_id, any_value(name), any_value(team_id),
        any_value(project_id), any_value(environment_id), any_value(service_id),
        any_value(is_production), any_value(environment_name), list_sort(list(distinct token))
    from held
    group by snapshot_id, variable_id
),
secrets as not materialized (  -- each secret value a variable holds (read twice, cheap)
    select snapshot_id, variable_id, fingerprint, is_production, environment_name,
        environment_id, false as referenced
    from valued
    where is_production is not null
    union all
    select snapshot_id, variable_id, fingerprint, is_production, environment_name,
        environment_id, true
    from held
),
mixed as (  -- values held on both sides at some time: few distinct values, fewer rows to pair
    select fingerprint from secrets
    group by fingerprint
    having bool_or(is_production) and bool_or(not is_production)
),
candidates as (
    select * from secrets semi join mixed using (fingerprint)
),
shared as (  -- matches are few: aggregate them, then join them to every secret (names sorted)
    select s.snapshot_id, s.variable_id, count(distinct o.variable_id) as matches,
        count(distinct o.variable_id) filter (where o.referenced) as referencing,
        string_agg(distinct coalesce(o.environment_name, o.environment_id), ', ') as environments,
        list(distinct o.variable_id order by o.variable_id) as ids
    from candidates s
    join candidates o
        on o.snapshot_id = s.snapshot_id and o.fingerprint = s.fingerprint
        and o.is_production <> s.is_production
    group by s.snapshot_id, s.variable_id
)
select s.*, coalesce(m.matches, 0) as matches, coalesce(m.referencing, 0) as referencing,
    m.environments, coalesce(m.ids, []) as ids
from holders s
left join shared m using (snapshot_id, variable_id)
