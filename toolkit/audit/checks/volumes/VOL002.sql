-- id: VOL002
-- title: Volume is not attached to any service
-- severity: low
-- area: volumes
-- risk: An orphaned volume costs money every day and keeps data (often uploads or dumps) that nobody looks after.
-- remediation: Attach the volume to the service that needs it, or back it up and delete it.
-- history: snapshot
with judged as (
    select
        *,
        -- a known mount status decides; the service id only when the status is not known
        case when mount_status = 'unattached' then true
            when mount_status in ('attached', 'mounted') then false
            else mounted_on_service_id is null
        end and not coalesce(is_deleting, false) as unattached
    from volumes
)
select
    snapshot_id, 'volume' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, mounted_on_service_id as service_id,
    case when unattached then 'alarm' else 'ok' end as status,
    format('Volume {} {} (mount status {}; {} of {} GB used).', coalesce(name, id),
        case
            when unattached then 'is not attached to any service'
            when coalesce(is_deleting, false) then 'is being deleted'
            else 'is attached to service ' || coalesce(mounted_on_service_id, '(not reported)')
        end,
        case
            when mount_status is null then 'not reported'
            when mount_status in ('unattached', 'attached', 'mounted') then mount_status
            else 'unknown state ' || mount_status
        end,
        coalesce(used_gb::varchar, 'unknown'),
        coalesce(capacity_gb::varchar, 'unknown')) as reason,
    to_json(struct_pack(mount_status, mounted_on_service_id, capacity_gb, used_gb,
        is_deleting)) as evidence
from judged
