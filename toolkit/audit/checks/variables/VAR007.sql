-- id: VAR007
-- title: Secret shared by production and non-production environments
-- severity: high
-- area: variables
-- risk: Whoever can read a staging or development secret also holds the production one, and rotating one breaks the other.
-- remediation: Give each environment its own value of the secret, then rotate the production one.
-- param: secret_names = passw(or)?d,pwd,secret,token,api_?key,private_?key,credential | comma-separated regular expressions (case-insensitive); protected variables and variables whose name matches one are secrets
with secrets as (
    select * from variable_items
    where fingerprint is not null and is_production is not null
      and not coalesce(is_reference, false)
      and (coalesce(is_protected, false)
           or regexp_matches(name, '(?i)(' || replace($secret_names, ',', '|') || ')'))
)
select
    s.snapshot_id, 'variable' as resource_type, s.variable_id as resource_id,
    s.name as resource_name, s.team_id, s.project_id, s.environment_id, s.service_id,
    case when count(o.variable_id) > 0 then 'alarm' else 'ok' end as status,
    case when count(o.variable_id) > 0
        then 'Secret ' || s.name || ' in ' || case when s.is_production then 'production' else 'non-production' end
            || ' environment ' || s.environment_name || ' has the same value as ' || count(o.variable_id)
            || ' variable(s) in ' || case when s.is_production then 'non-production' else 'production' end
            || ' environment(s): ' || string_agg(distinct o.environment_name, ', ') || '.'
        else 'Secret ' || s.name || ' in environment ' || s.environment_name
            || ' shares its value with no environment of the other kind.'
    end as reason,
    to_json(struct_pack(is_production := s.is_production,
        shared_with := coalesce(list(o.variable_id order by o.variable_id)
            filter (where o.variable_id is not null), []))) as evidence
from secrets s
left join secrets o
    on o.snapshot_id = s.snapshot_id and o.fingerprint = s.fingerprint
    and o.is_production <> s.is_production
group by 1, 2, 3, 4, 5, 6, 7, 8, s.is_production, s.environment_name
