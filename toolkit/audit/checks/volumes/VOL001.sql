-- id: VOL001
-- title: Volume is nearly full
-- severity: high
-- area: volumes
-- risk: A full volume makes writes fail: databases stop accepting transactions and applications lose uploads or crash.
-- remediation: Resize the volume (or clean it up) before it fills; watch its growth.
-- history: snapshot
-- param: max_used_pct = 85 | a volume more than this percentage full is flagged
with judged as (
    select *, 100 * used_gb / capacity_gb as used_pct
    from volumes
    where capacity_gb > 0 and used_gb is not null
)
select
    snapshot_id, 'volume' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, mounted_on_service_id as service_id,
    case when used_pct > $max_used_pct then 'alarm' else 'ok' end as status,
    format('Volume {} is {}% full ({} of {} GB used; the threshold is {}%){}.',
        coalesce(name, id), round(used_pct, 1), round(used_gb, 2), round(capacity_gb, 2),
        $max_used_pct, if(coalesce(is_pending_resize, false),
            ', a resize to ' || coalesce(requested_gb || ' GB', 'a new size') || ' is pending', '')
    ) as reason,
    to_json(struct_pack(used_pct := round(used_pct, 2), used_gb, capacity_gb, requested_gb,
        is_pending_resize, max_used_pct := $max_used_pct)) as evidence
from judged
