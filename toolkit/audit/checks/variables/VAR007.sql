-- id: VAR007
-- title: Secret shared by production and non-production environments
-- severity: high
-- area: variables
-- risk: Whoever can read a staging or development secret also holds the production one, and rotating one breaks the other; a reference across environments (staging's ${{service.<production database>.DATABASE_URL}}) shares it as surely as a copy.
-- remediation: Give each environment its own value of the secret (and its own service to reference), then rotate the production one.
-- history: snapshot
-- param: min_length = 12 | secrets shorter than this many characters are not compared (as VAR003): protected variables also hold user names, database names, hosts and ports (postgres, localhost, 5432) that are the same in every environment, while generated credentials are longer
-- param: secret_names = passw(or)?d,passphrase,_pass(_.*)?$,pwd(_.*)?$,secret,token(_.*)?$,credential,api_?keys?(_.*)?$,app_?keys?(_.*)?$,access_?keys?(_.*)?$,master_?keys?(_.*)?$,private_?keys?(_.*)?$,signing_?keys?(_.*)?$,encryption_?keys?(_.*)?$,jwt_?keys?(_.*)?$ | comma-separated regular expressions (case-insensitive); protected variables and variables whose name matches one, and none of not_secret_names, are secrets
-- param: not_secret_names = ^(old)?pwd$,application_credentials$,_id$,_name$,_file$,_path$,_dir$,_len(gth)?$,_ttl$,_seconds?$,_minutes?$,_hours?$,_days?$,_expir[a-z]*$ | comma-separated regular expressions (case-insensitive); a name matching one is no secret's name even if it matches secret_names: a setting about a secret (its id, name, file, path, length or lifetime), GOOGLE_APPLICATION_CREDENTIALS (a file path), the shell's PWD and OLDPWD
with valued as (  -- secrets' values as fingerprints, long enough to compare
    select * from variable_items
    where fingerprint is not null and value_length >= $min_length
      and not coalesce(is_reference, false)
      and (coalesce(is_protected, false)
           or secret_name(name, $secret_names, $not_secret_names))
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
select
    s.snapshot_id, 'variable' as resource_type, s.variable_id as resource_id,
    s.name as resource_name, s.team_id, s.project_id, s.environment_id, s.service_id,
    -- "shares with none" needs every environment's values: where a variables call failed or
    -- answered 404 (hidden from the collecting key), the other copy may be among those not seen
    case when m.matches > 0 then 'alarm'
        when not coalesce(k.variables_all_seen, true) then 'unknown' else 'ok' end as status,
    concat('Secret ', s.name, ' in ', if(m.matches > 0,
        concat(if(s.is_production, 'production', 'non-production'), ' environment ',
            coalesce(s.environment_name, s.environment_id), ' has the same value as ',
            m.matches, ' variable(s) in ', if(s.is_production, 'non-production', 'production'),
            ' environment(s): ', m.environments, if(m.referencing > 0,
                concat(' (', m.referencing, ' of them through a reference)'), '')),
        concat('environment ', coalesce(s.environment_name, s.environment_id),
            ' shares its value with no environment of the other kind',
            if(coalesce(k.variables_all_seen, true), '', concat(' among those collected, but ',
                if(k.variables_complete, 'a variables call answered 404 (hidden from the '
                    || 'collecting key)', 'a listing or a variables call failed'),
                ' in this snapshot, so a copy may not have been seen: not judged')))),
        if(len(s.via) > 0, concat(' (through ', array_to_string(s.via, ', '), ')'), ''), '.')
        as reason,
    to_json(struct_pack(is_production := s.is_production,
        shared_with := coalesce(m.ids, []), through := s.via)) as evidence
from holders s
left join shared m using (snapshot_id, variable_id)
left join collection_coverage k using (snapshot_id)
