-- id: RES006
-- title: Memory limit not raised after OOM kills
-- severity: high
-- area: resource-limits
-- risk: The service was killed for running out of memory and still has the same limit, so it will be killed again under the same load.
-- remediation: Raise memory_limits_megabytes above the service's peak usage, or find and fix the leak.
-- history: all
-- param: window_days = 7 | OOM kills seen within this many days before a snapshot count
-- Each service's kills and its limit at the last one: see views/memory_at_oom.sql
with judged as (
    select *,
        -- an event counts its kills since it was first seen, which may be before the window
        concat(kills, if(kills = 1, ' time', ' times'), ' since ',
            strftime(first_oom, '%Y-%m-%d %H:%M UTC')) as times,
        strftime(oom_at, '%Y-%m-%d %H:%M UTC') as last_at,
        coalesce(kills > 0 and memory_limits_megabytes > 0 and not unknown
            and memory_limits_megabytes <= limit_at_oom, false) as not_raised
    from memory_at_oom($window_days)
)
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when not_raised then 'alarm' when unknown or uncollected or unreported then 'unknown'
        else 'ok' end as status,
    case
        when uncollected then format('Service {} shows no OOM kill in the last {} days, but its '
            || 'replica events were not all collected ({} failed): not judged.',
            coalesce(name, id), $window_days, failed)
        when oom_at is null then format(
            'Service {} was not OOM-killed in the last {} days.', coalesce(name, id), $window_days)
        when unreported then format('Service {} was OOM-killed {} (last at {}), but its memory '
            || 'limit is not reported: not judged.', coalesce(name, id), times, last_at)
        when memory_limits_megabytes <= 0 then format(
            'Service {} was OOM-killed {} but has no memory limit to raise (see RES002).',
            coalesce(name, id), times)
        when unknown then format('Service {} was OOM-killed {} (last at {}); its memory '
            || 'limit then was not read and the service changed after it, so whether the '
            || 'limit of {} MB was raised is unknown: not judged.',
            coalesce(name, id), times, last_at, memory_limits_megabytes)
        when limit_at_oom <= 0 then format('Service {} was OOM-killed {} (last at {}) with no '
            || 'memory limit {}; it is now limited to {} MB.',
            coalesce(name, id), times, last_at, known, memory_limits_megabytes)
        when not_raised then format('Service {} was OOM-killed {} (last at {}) and its memory '
            || 'limit of {} MB is no higher than the {} MB it had {}.',
            coalesce(name, id), times, last_at, memory_limits_megabytes, limit_at_oom, known)
        else format('Service {} was OOM-killed {} (last at {}); its memory limit has risen '
            || 'from {} MB to {} MB.',
            coalesce(name, id), times, last_at, limit_at_oom, memory_limits_megabytes)
    end as reason,
    to_json(struct_pack(kills, oom_at, limit_at_oom, memory_limits_megabytes,
        window_days := $window_days)) as evidence
from judged
