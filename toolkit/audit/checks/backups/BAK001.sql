-- id: BAK001
-- title: Database has no backups configured
-- severity: critical
-- area: backups
-- risk: A database with neither a backup schedule nor a backup bucket cannot be restored after a bad migration, a deletion or a lost volume.
-- remediation: Set a backup schedule and an S3 backup bucket for the database.
-- history: snapshot
with judged as (
    select
        *,
        nullif(trim(backup_schedule), '') is null
            and nullif(trim(s3_backup_bucket_id), '') is null as no_backup
    from services
    where type = 'database' or nullif(database_type, '') is not null
)
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when no_backup then 'alarm' else 'ok' end as status,
    format('Database {} ({}) {}.', coalesce(name, id),
        coalesce(nullif(database_type, ''), 'type not reported'),
        if(no_backup, 'has no backup schedule and no backup bucket', format(
            'has backups configured (schedule {}, bucket {})',
            coalesce(nullif(trim(backup_schedule), ''), 'none'),
            coalesce(nullif(trim(s3_backup_bucket_id), ''), 'none')))
    ) as reason,
    to_json(struct_pack(database_type, backup_schedule, s3_backup_bucket_id,
        backup_retention_count)) as evidence
from judged
