-- id: REP003
-- title: Replica restarts keep rising
-- severity: medium
-- area: replicas
-- risk: Replicas that keep restarting drop requests on every restart and hide a crash or an OOM that will get worse under load.
-- remediation: Read the replica events and logs for why the containers exit, and fix the cause.
-- history: previous
-- param: min_increase = 5 | restarts added since the previous snapshot that raise an alarm
with restarts as (
    -- owner ids from the replicas themselves (their any_value costs): replicas are listed
    -- per environment by default, so a snapshot may hold replicas of a service its services
    -- list lacks (created in between, or that list failed); ids from services would be null
    select
        snapshot_id, service_id, any_value(team_id) as team_id,
        any_value(project_id) as project_id, any_value(environment_id) as environment_id,
        count(*) as pods, sum(coalesce(restart_count, 0)) as restarts
    from replicas
    group by snapshot_id, service_id
),
seqs as (  -- each committed snapshot and the one before it
    select snapshot_id, seq, lag(seq) over (order by seq) as previous_seq,
        lag(snapshot_at) over (order by seq) as previous_at
    from snapshots where status in ('complete', 'partial')
),
history as (  -- the service's count at the previous snapshot: none if it had no replicas there
    select r.*, s.previous_seq, s.previous_at,
        if(lag(s.seq) over w = s.previous_seq, lag(r.restarts) over w, null) as previous
    from restarts as r join seqs as s using (snapshot_id)
    window w as (partition by r.service_id order by s.seq)
),
times as (  -- each snapshot time formatted once, not once per row
    select distinct snapshot_at, strftime(snapshot_at, '%Y-%m-%d %H:%M UTC') as text,
        to_json(snapshot_at) as json
    from snapshots
)
-- The reason is built with concat(), one string a row: || builds one per operator, and
-- format() costs more (0.2 s of 900,000 rows). A json value goes into to_json as it is.
select
    h.snapshot_id, 'service' as resource_type, h.service_id as resource_id,
    s.name as resource_name, h.team_id, h.project_id, h.environment_id, h.service_id,
    case when h.restarts - h.previous >= $min_increase then 'alarm' else 'ok' end as status,
    concat('Service ', coalesce(s.name, h.service_id), ' has ', h.restarts, ' restarts (replicas: ',
        h.pods, '), ', case
            when h.previous_seq is null then 'its first count'
            when h.previous is null then concat('none counted at the previous snapshot (',
                t.text, ')')
            when h.restarts < h.previous then concat('reset from ', h.previous)
            else concat(h.restarts - h.previous, ' more than at the previous snapshot (',
                t.text, ')')
        end, '.') as reason,
    to_json(struct_pack(h.restarts, h.previous, previous_at := t.json, h.pods,
        min_increase := $min_increase)) as evidence
from history as h
left join services as s on s.snapshot_id = h.snapshot_id and s.id = h.service_id
left join times as t on t.snapshot_at = h.previous_at
