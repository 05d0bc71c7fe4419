-- id: KEY006
-- title: API key unused for a long time
-- severity: low
-- area: key-scope
-- risk: A key nobody uses is a standing credential with no owner watching it; its leak would go unnoticed.
-- remediation: Revoke the key, or record who needs it and why.
-- history: snapshot
-- param: max_idle_days = 90 | a key unused for more than this many whole days (or never used and created more than that many whole days ago) is flagged
-- Keys are read through /users/me with their own token. A platform that counts that call as
-- a use (the simulator stamps last_used_at before it answers) shows every key the crawl
-- reads as used during the collection; docs/spec/api-facts.md leaves open which one a
-- platform does.
-- A last use within the collection (its length before the snapshot's time, five minutes
-- either side for clocks apart) may be that call: how long the key was idle before it is
-- not known, so it is not judged ('unknown'), not a fresh use.
with judged as (
    -- whole days idle: the one number both the status and the reason use
    select c.*,
        floor((epoch(c.snapshot_at) - epoch(coalesce(c.last_used_at, c.created_at))) / 86400)::bigint as idle_days,
        coalesce(c.last_used_at between c.snapshot_at
            - coalesce(sn.finished_at - sn.started_at, interval 0 second) - interval 5 minute
            and c.snapshot_at + interval 5 minute, false) as own_use
    from credentials c
    join snapshots sn on sn.snapshot_id = c.snapshot_id
    -- a last use /users/me left out or the parser could not read is not "never", and a
    -- never-used key without a creation time has no known age: KEY008 reports both
    where is_api_key and coalesce(last_used_at, created_at) is not null
      and coalesce(len(list_filter(problems, lambda p: regexp_matches(p, '^api_key(\.last_used_at)? '))), 0) = 0
)
select
    snapshot_id, 'credential' as resource_type, name as resource_id, name as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when idle_days > $max_idle_days then 'alarm' when own_use then 'unknown' else 'ok' end
        as status,
    case
        when own_use and idle_days <= $max_idle_days
            then 'Key ' || name || ' was last used during this collection ('
                || strftime(last_used_at, '%Y-%m-%d %H:%M UTC') || '), likely by its own '
                || '/users/me call, so how long it was idle before is not known: not judged.'
        when last_used_at is null
            then 'Key ' || name || ' was never used; it was created ' || idle_days
                || ' days before the snapshot (limit ' || $max_idle_days || ').'
        else 'Key ' || name || ' was last used ' || idle_days
            || ' days before the snapshot (limit ' || $max_idle_days || ').'
    end as reason,
    to_json(struct_pack(key_id, role, created_at, last_used_at, idle_days,
        use_during_collection := own_use)) as evidence
from judged
