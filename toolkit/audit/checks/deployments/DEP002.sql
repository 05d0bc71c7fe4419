-- id: DEP002
-- title: Current deployment is not the last successful one
-- severity: medium
-- area: deployments
-- risk: The service runs something other than its last good build (a rollback or a broken release), so what is live differs from what the team believes is deployed.
-- remediation: Find out why the last successful deployment is not live, then redeploy it or the intended release.
-- history: snapshot
with judged as (
    select
        *,
        coalesce(current_deployment_id <> last_successful_deployment_id, false) as differs
    from services
    where current_deployment_id is not null or last_successful_deployment_id is not null
)
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when differs then 'alarm' else 'ok' end as status,
    format('Service {} {}.', coalesce(name, id), case
        when differs then format(
            'runs deployment {} ({}), not its last successful deployment {} ({})',
            current_deployment_id, coalesce(current_deployment_status, 'status not reported'),
            last_successful_deployment_id,
            coalesce(last_successful_deployment_status, 'status not reported'))
        when current_deployment_id is null
            then 'has no current deployment to compare with its last successful one'
        when last_successful_deployment_id is null
            then 'has no successful deployment to compare with its current one'
        else 'runs its last successful deployment ' || current_deployment_id
    end) as reason,
    to_json(struct_pack(current_deployment_id, current_deployment_status,
        last_successful_deployment_id, last_successful_deployment_status)) as evidence
from judged
