-- Each variable of an environment that holds a secret value, with the variables of the
-- other kind of environment (production or not: all_resources.is_production) holding the
-- same value in the same snapshot. A secret is a value, not itself a reference, of at least
-- min_length characters (compared by fingerprint, never read), of a protected variable or
-- of one whose name is in names. A variable holds its own, and those it references out of
-- its environment (references_out.sql: staging's ${{service.<production database>.URL}}),
-- directly or through 1 or 2 more references, as the platform resolves them 3 deep
-- (staging's ${{project.DB_PASSWORD}} holding ${{service.<production database>.PASSWORD}});
-- via lists the tokens of its references out, sorted (empty for its own value). matches
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
outs as materialized (  -- references out of environments (read twice: computed once)
    select * from references_out where is_production is not null
),
-- A reference out may name a variable holding no value of its own but references (a
-- project's ${{service.<production database>.PASSWORD}}, a production service's
-- ${{service.<database>.URL}}): the variables 1 and 2 references further (hop2: the
-- references of the variables named, from the few distinct ones; chained: those and theirs)
hop2 as (
    select t.snapshot_id, t.source_variable_id as start, r.source_type, coalesce(r.source_id,
            owner_of(r.source_type, r.team_id, r.project_id, r.environment_id, null))
            as source_owner, r.key
    from (select distinct snapshot_id, source_variable_id, source_type, source_owner, key
        from outs) t
    join variable_references r on r.snapshot_id = t.snapshot_id
        and r.level = t.source_type and r.variable_name = t.key
        and owner_of(r.level, r.team_id, r.project_id, r.environment_id, r.service_id)
            = t.source_owner
),
chained as (
    select snapshot_id, start, variable_key(source_type, source_owner, key) as variable_id,
        key as name
    from hop2
    union
    select h.snapshot_id, h.start, variable_key(r.source_type, coalesce(r.source_id,
        owner_of(r.source_type, r.team_id, r.project_id, r.environment_id, null)), r.key), r.key
    from hop2 h
    join variable_references r on r.snapshot_id = h.snapshot_id
        and r.level = h.source_type and r.variable_name = h.key
        and owner_of(r.level, r.team_id, r.project_id, r.environment_id, r.service_id)
            = h.source_owner
),
held as (
    -- A variable referencing a secret out of its environment holds it too: staging's
    -- ${{service.<production database>.DATABASE_URL}}, or production's and staging's
    -- ${{project.API_TOKEN}} (views/references_out.sql), directly or through the chain above
    select o.*, s.fingerprint
    from outs as o
    join (
        select snapshot_id, variable_id as start, fingerprint from valued
        union all
        -- the few secrets a chain reaches (valued filtered by their names first, a list
        -- test per row: joined to them directly, the planner hashed every secret)
        select c.snapshot_id, c.start, s.fingerprint
        from chained as c
        join (from valued
            where list_contains((select list(distinct name) from chained), name)) as s
            on s.snapshot_id = c.snapshot_id and s.variable_id = c.variable_id
    ) as s on s.snapshot_id = o.snapshot_id and s.start = o.source_variable_id
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
