-- id: VOL002
-- title: Volume is not attached to any service
-- severity: low
-- area: volumes
-- risk: An orphaned volume costs money every day and keeps data (often uploads or dumps) that nobody looks after; one the platform calls attached to a service that no longer exists is orphaned all the same.
-- remediation: Attach the volume to the service that needs it, or back it up and delete it.
-- history: snapshot
with reported as (
    select v.*,
        -- a known mount status decides; the service id only when the status is not known
        case when mount_status = 'unattached' then false
            when mount_status in ('attached', 'mounted') then true
            else mounted_on_service_id is not null
        end as reported_attached,
        -- the service it names is not in the snapshot: deleted where the snapshot can tell
        -- (views/absence_known.sql), else perhaps only hidden from the collecting key
        mounted_on_service_id is not null and not exists (select 1 from services s
            where s.snapshot_id = v.snapshot_id and s.id = v.mounted_on_service_id)
            as service_absent,
        a.absent_is_deleted
    from volumes v
    join absence_known a on a.snapshot_id = v.snapshot_id
),
judged as (
    select *,
        case when coalesce(is_deleting, false) then 'ok'
            when not reported_attached then 'alarm'
            when not service_absent then 'ok'
            when absent_is_deleted then 'alarm'
            else 'unknown' end as verdict
    from reported
)
select
    snapshot_id, 'volume' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, mounted_on_service_id as service_id,
    verdict as status,
    format('Volume {} {} (mount status {}; {} of {} GB used).', coalesce(name, id),
        case
            when coalesce(is_deleting, false) then 'is being deleted'
            when not reported_attached then 'is not attached to any service'
            when not service_absent
                then 'is attached to service ' || coalesce(mounted_on_service_id, '(not reported)')
            when absent_is_deleted then 'is reported attached to service '
                || mounted_on_service_id || ', which is not in the snapshot: no service uses it'
            else 'is reported attached to service ' || mounted_on_service_id
                || ', which is not in a snapshot that may not hold every service'
                || ' (a listing failed, or the collecting key is limited): not judged'
        end,
        case
            when mount_status is null then 'not reported'
            when mount_status in ('unattached', 'attached', 'mounted') then mount_status
            else 'unknown state ' || mount_status
        end,
        coalesce(used_gb::varchar, 'unknown'),
        coalesce(capacity_gb::varchar, 'unknown')) as reason,
    to_json(struct_pack(mount_status, mounted_on_service_id,
        service_in_snapshot := not service_absent, capacity_gb, used_gb, is_deleting)) as evidence
from judged
