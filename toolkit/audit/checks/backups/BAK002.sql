-- id: BAK002
-- title: Database keeps too few backups
-- severity: medium
-- area: backups
-- risk: With few backups kept, corruption or a bad migration noticed after a few days can no longer be rolled back.
-- remediation: Raise backup_retention_count to cover at least the time it takes to notice a problem.
-- history: snapshot
-- param: min_retention = 7 | databases keeping fewer backups than this are flagged
with judged as (
    select *, backup_retention_count < $min_retention as too_few  -- null: not reported
    from services
    where (type = 'database' or nullif(database_type, '') is not null)
        and (nullif(trim(backup_schedule), '') is not null
            or nullif(trim(s3_backup_bucket_id), '') is not null)
)
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when too_few is null then 'unknown' when too_few then 'alarm' else 'ok' end as status,
    format('Database {} {}; the minimum is {}.', coalesce(name, id),
        case when backup_retention_count is null
                then 'is backed up but does not report backup_retention_count: not judged'
            when backup_retention_count > 0
                then format('keeps {} backups', backup_retention_count)
            else format('is backed up but sets no number of backups to keep (retention {})',
                backup_retention_count) end,
        $min_retention) as reason,
    to_json(struct_pack(backup_retention_count, backup_schedule, s3_backup_bucket_id,
        min_retention := $min_retention)) as evidence
from judged
