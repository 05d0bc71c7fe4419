-- id: DEP003
-- title: Last deployment failed
-- severity: medium
-- area: deployments
-- risk: The newest change did not ship (or ships and crashes), so fixes and configuration the team believes are live are not.
-- remediation: Read the deployment's error and logs, fix the build or launch, and deploy again.
-- history: snapshot
with judged as (
    select
        s.*,
        coalesce(nullif(d.error, ''), nullif(d.status_message, ''),
            nullif(array_to_string(d.crashing_reasons, '; '), ''), 'no error message') as message,
        s.last_deployment_status in ('build-failed', 'launch-error', 'crashing') as failed,
        s.last_deployment_status not in ('build-pending', 'build-queued', 'build-running',
            'build-succeeded', 'build-cancelled', 'build-failed', 'active', 'launching',
            'launch-error', 'crashing', 'removed') as unknown
    from services as s
    -- a deployment without any message reads as 'no error message', like no deployment:
    -- join only those that may have one, not the whole deployment history; is_last (null in
    -- stores older than the flags) is read first and spares reading the others' ids and text
    left join (select snapshot_id, id, error, status_message, crashing_reasons from deployments
               where (error <> '' or status_message <> '' or len(crashing_reasons) > 0)
                   and is_last is not false) as d
        on d.snapshot_id = s.snapshot_id and d.id = s.last_deployment_id
    where s.last_deployment_status is not null
)
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when failed then 'alarm' when unknown then 'unknown' else 'ok' end as status,
    case
        when failed then format('The last deployment {} of service {} ended {}: {}.',
            coalesce(last_deployment_id, '(no id)'), coalesce(name, id), last_deployment_status,
            rtrim(message, '.'))
        when unknown then format(
            'The last deployment of service {} is in unknown state {}, so it is not judged.',
            coalesce(name, id), last_deployment_status)
        else format('The last deployment of service {} is {}.',
            coalesce(name, id), last_deployment_status)
    end as reason,
    to_json(struct_pack(last_deployment_id, last_deployment_status, message,
        last_successful_deployment_id)) as evidence
-- text of older stores, collected before scrubbing: credentials out (views/scrubbed.sql)
from (select * replace (scrubbed(message) as message) from judged)
