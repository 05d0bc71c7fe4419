-- id: VAR007
-- title: Secret shared by production and non-production environments
-- severity: high
-- area: variables
-- risk: Whoever can read a staging or development secret also holds the production one, and rotating one breaks the other.
-- remediation: Give each environment its own value of the secret, then rotate the production one.
-- history: snapshot
-- param: min_length = 12 | secrets shorter than this many characters are not compared (as VAR003): protected variables also hold user names, database names, hosts and ports (postgres, localhost, 5432) that are the same in every environment, while generated credentials are longer
-- param: secret_names = passw(or)?d,passphrase,_pass(_.*)?$,pwd(_.*)?$,secret,token(_.*)?$,credential,api_?keys?(_.*)?$,app_?keys?(_.*)?$,access_?keys?(_.*)?$,master_?keys?(_.*)?$,private_?keys?(_.*)?$,signing_?keys?(_.*)?$,encryption_?keys?(_.*)?$,jwt_?keys?(_.*)?$ | comma-separated regular expressions (case-insensitive); protected variables and variables whose name matches one, and none of not_secret_names, are secrets
-- param: not_secret_names = ^(old)?pwd$,application_credentials$,_id$,_name$,_file$,_path$,_dir$,_len(gth)?$,_ttl$,_seconds?$,_minutes?$,_hours?$,_days?$,_expir[a-z]*$ | comma-separated regular expressions (case-insensitive); a name matching one is no secret's name even if it matches secret_names: a setting about a secret (its id, name, file, path, length or lifetime), GOOGLE_APPLICATION_CREDENTIALS (a file path), the shell's PWD and OLDPWD
with secrets as (
    select snapshot_id, variable_id, name, team_id, project_id, environment_id, service_id,
        fingerprint, is_production, environment_name
    from variable_items
    where fingerprint is not null and value_length >= $min_length and is_production is not null
      and not coalesce(is_reference, false)
      and (coalesce(is_protected, false)
           or secret_name(name, $secret_names, $not_secret_names))
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
    select s.snapshot_id, s.variable_id, count(o.variable_id) as matches,
        string_agg(distinct coalesce(o.environment_name, o.environment_id), ', ') as environments,
        list(o.variable_id order by o.variable_id) filter (where o.variable_id is not null) as ids
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
    case when m.matches > 0
        then 'Secret ' || s.name || ' in ' || case when s.is_production then 'production' else 'non-production' end
            || ' environment ' || coalesce(s.environment_name, s.environment_id) || ' has the same value as ' || m.matches
            || ' variable(s) in ' || case when s.is_production then 'non-production' else 'production' end
            || ' environment(s): ' || m.environments || '.'
        when not coalesce(k.variables_all_seen, true)
            then 'Secret ' || s.name || ' in environment ' || coalesce(s.environment_name, s.environment_id)
                || ' shares its value with no environment of the other kind among those collected, but '
                || case when k.variables_complete then 'a variables call answered 404 (hidden '
                    || 'from the collecting key)' else 'a listing or a variables call failed' end
                || ' in this snapshot, so a copy may not have been seen: not judged.'
        else 'Secret ' || s.name || ' in environment ' || coalesce(s.environment_name, s.environment_id)
            || ' shares its value with no environment of the other kind.'
    end as reason,
    to_json(struct_pack(is_production := s.is_production,
        shared_with := coalesce(m.ids, []))) as evidence
from secrets s
left join shared m using (snapshot_id, variable_id)
left join collection_coverage k using (snapshot_id)
