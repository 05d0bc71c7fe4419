-- id: VAR007
-- title: Secret shared by production and non-production environments
-- severity: high
-- area: variables
-- risk: Whoever can read a staging or development secret also holds the production one, and rotating one breaks the other; a reference across environments (staging's ${{service.<production database>.DATABASE_URL}}, or one to a variable referencing it) shares it as surely as a copy.
-- remediation: Give each environment its own value of the secret (and its own service to reference), then rotate the production one.
-- history: snapshot
-- param: min_length = 12 | secrets shorter than this many characters are not compared (as VAR003): protected variables also hold user names, database names, hosts and ports (postgres, localhost, 5432) that are the same in every environment, while generated credentials are longer
-- param: secret_names = {SECRET_NAMES} | comma-separated regular expressions (case-insensitive); protected variables and variables whose name matches one, and none of not_secret_names, are secrets
-- param: not_secret_names = {NOT_SECRET_NAMES} | comma-separated regular expressions (case-insensitive); a name matching one is no secret's name even if it matches secret_names: a setting about a secret (its id, name, file, path, length or lifetime, or where it is fetched or sent: OAUTH_TOKEN_URL, TOKEN_ENDPOINT, API_KEY_HEADER; a password inside a URL is VAR010's), GOOGLE_APPLICATION_CREDENTIALS (a file path), the shell's PWD and OLDPWD
select
    s.snapshot_id, 'variable' as resource_type, s.variable_id as resource_id,
    s.name as resource_name, s.team_id, s.project_id, s.environment_id, s.service_id,
    -- "shares with none" needs every environment's values: where a variables call failed or
    -- answered 404 (hidden from the collecting key), the other copy may be among those not seen
    case when s.matches > 0 then 'alarm'
        when not coalesce(k.variables_all_seen, true) then 'unknown' else 'ok' end as status,
    concat('Secret ', s.name, ' in ', if(s.matches > 0,
        concat(if(s.is_production, 'production', 'non-production'), ' environment ',
            coalesce(s.environment_name, s.environment_id), ' has the same value as ',
            s.matches, ' variable(s) in ', if(s.is_production, 'non-production', 'production'),
            ' environment(s): ', s.environments, if(s.referencing > 0,
                concat(' (', s.referencing, ' of them through a reference)'), '')),
        concat('environment ', coalesce(s.environment_name, s.environment_id),
            ' shares its value with no environment of the other kind',
            if(coalesce(k.variables_all_seen, true), '', concat(' among those collected, but ',
                if(k.variables_complete, 'a variables call answered 404 (hidden from the '
                    || 'collecting key)', 'a listing or a variables call failed'),
                ' in this snapshot, so a copy may not have been seen: not judged')))),
        if(len(s.via) > 0, concat(' (through ', array_to_string(s.via, ', '), ')'), ''), '.')
        as reason,
    to_json(struct_pack(is_production := s.is_production,
        shared_with := s.ids, through := s.via)) as evidence
-- each variable holding a secret, and those of the other kind of environment holding the
-- same: see views/secret_holders.sql. The check picks the names of secrets: the engine
-- validates its regular expressions where it passes them to secret_name
from secret_holders($min_length, (
    select list(name) filter (where secret_name(name, $secret_names, $not_secret_names))
    from (select distinct name from variables))) s
left join collection_coverage k using (snapshot_id)
