-- id: DEP001
-- title: Crash loop began right after a configuration change
-- severity: high
-- area: deployments
-- risk: A configuration change (image, command, resources, health check...) broke the service, and it stays broken until someone connects the two.
-- remediation: Compare the changed settings with the last working configuration and revert or fix them.
-- history: all
-- each service's crash state, its streak's start and what changed then: see
-- views/crash_streaks.sql
select
    s.snapshot_id, 'service' as resource_type, s.service_id as resource_id,
    v.name as resource_name, v.team_id, v.project_id, v.environment_id, s.service_id,
    case
        when s.crashing and len(s.changed) > 0 then 'alarm'
        -- no start read, and it existed before the snapshots read: 'ok' would end an alarm
        when s.crashing and s.start_seq is null and s.began_unseen then 'unknown'
        else 'ok'
    end as status,
    format('Service {} {}.', coalesce(v.name, s.service_id), case
        when not s.crashing then 'is not crashing'
        when s.crash_started is null and s.began_unseen then concat(
            'has been crashing since before ',
            'the snapshots read (created ', coalesce(strftime(v.created_at, '%Y-%m-%d %H:%M UTC'),
            'at a time not reported'), '), so whether a change started it cannot be judged')
        when s.crash_started is null
            then 'has been crashing since it was first seen, so no change is blamed'
        else 'has been crashing since ' || strftime(s.crash_started, '%Y-%m-%d %H:%M UTC') || if(
            len(s.changed) > 0,
            ', right after its configuration changed (' || array_to_string(s.changed, ', ') || ')',
            ', with no configuration change in that snapshot or the one before')
    end) as reason,
    to_json(struct_pack(crash_started := s.crash_started, changed := s.changed,
        hash_before := md5(s.config_before), hash_after := md5(s.config_after))) as evidence
from crash_streaks as s
join services as v on v.snapshot_id = s.snapshot_id and v.id = s.service_id
