-- id: REP005
-- title: Public service has no health check
-- severity: medium
-- area: replicas
-- risk: Without a health check the platform routes public traffic to replicas that are starting, hung or broken, and never restarts them.
-- remediation: Configure an HTTP health check path (or a command) that fails when the service cannot serve.
-- history: snapshot
with judged as (
    select
        * replace (
            -- text of older stores, collected before scrubbing: credentials out
            -- (views/scrubbed.sql); a command may carry a token or a URL with userinfo
            scrubbed(health_check_path) as health_check_path,
            scrubbed(health_check_command) as health_check_command),
        -- a type that says there is none wins over a path or command left behind
        lower(trim(health_check_type)) in ('none', 'disabled')
            or (nullif(trim(health_check_path), '') is null
                and nullif(trim(health_check_command), '') is null
                and nullif(trim(health_check_type), '') is null) as no_check
    from services
    where is_public
)
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when no_check then 'alarm' else 'ok' end as status,
    case
        when no_check then format('Public service {} has no health check.', coalesce(name, id))
        else format('Public service {} has a health check ({}) on {}.', coalesce(name, id),
            coalesce(nullif(health_check_type, ''), 'type not reported'),
            coalesce(nullif(health_check_path, ''), nullif(health_check_command, ''), 'its port'))
    end as reason,
    to_json(struct_pack(is_public, health_check_type, health_check_path, health_check_command,
        health_check_port)) as evidence
from judged
