-- id: DEP002
-- title: Current deployment is not the last successful one
-- severity: medium
-- area: deployments
-- risk: The service runs something other than its last good build (a rollback or a broken release), so what is live differs from what the team believes is deployed.
-- remediation: Find out why the last successful deployment is not live, then redeploy it or the intended release.
-- history: snapshot
-- each service's two deployments, looked up where they differ: see
-- views/service_deployments.sql
with verdict as (
    select *,
        case
            when not differs then 'ok'
            -- either deployment's details not collected: neither a rollback nor a release
            when current_created_at is null or successful_created_at is null then 'unknown'
            when current_created_at < successful_created_at then 'alarm'  -- a rollback
            when current_created_at = successful_created_at then 'unknown'  -- no order
            -- newer: a broken release alarms; one still building or launching does not
            when deployment_status in ('crashing', 'launch-error', 'build-failed') then 'alarm'
            when deployment_status in ('build-pending', 'build-queued', 'build-running',
                'build-succeeded', 'build-cancelled', 'launching', 'active', 'removed')
                then 'ok'
            else 'unknown'  -- a status outside the values known (api-facts), or none
        end as status
    from service_deployments
)
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id, status,
    concat('Service ', coalesce(name, id), ' ', case
        when not differs and current_deployment_id is null
            then 'has no current deployment to compare with its last successful one'
        when not differs and last_successful_deployment_id is null
            then 'has no successful deployment to compare with its current one'
        when not differs then 'runs its last successful deployment ' || current_deployment_id
        else concat('runs deployment ', current_deployment_id, ' (',
            coalesce(deployment_status, 'status not reported'), ', created ',
            coalesce(strftime(current_created_at, '%Y-%m-%d %H:%M UTC'), 'when: not collected'),
            '), not its last successful deployment ', last_successful_deployment_id, ' (created ',
            coalesce(strftime(successful_created_at, '%Y-%m-%d %H:%M UTC'), 'when: not collected'),
            '): ', case
                when current_created_at < successful_created_at then 'a rollback'
                when status = 'alarm' then 'a newer release that failed'
                when status = 'ok' then 'a newer release that has not failed'
                when current_created_at > successful_created_at
                    then 'a newer release whose status is not understood, not judged'
                else 'which is newer cannot be judged'
            end)
    end, '.') as reason,
    to_json(struct_pack(current_deployment_id, current_deployment_status,
        last_successful_deployment_id, last_successful_deployment_status,
        current_deployment_created_at := current_created_at,
        last_successful_deployment_created_at := successful_created_at)) as evidence
from verdict
