-- id: REP003
-- title: Replica restarts keep rising
-- severity: medium
-- area: replicas
-- risk: Replicas that keep restarting drop requests on every restart and hide a crash or an OOM that will get worse under load.
-- remediation: Read the replica events and logs for why the containers exit, and fix the cause.
-- history: previous
-- param: min_increase = 5 | restarts since the previous snapshot that raise an alarm
-- Restarts per replica since the previous snapshot, summed per service: see
-- views/replica_restarts.sql. A previous snapshot whose calls may have left the service's
-- replicas out (previous_uncollected) is no evidence that it had none, and a count not
-- reported (now, or then for a replica kept) is no evidence of no restarts: not judged,
-- unless the restarts counted already reach the alarm.
with times as (  -- each snapshot time formatted once, not once per row
    select distinct snapshot_at, strftime(snapshot_at, '%Y-%m-%d %H:%M UTC') as text,
        to_json(snapshot_at) as json
    from snapshots
)
-- The reason is built with concat(), one string a row: || builds one per operator, and
-- format() costs more (0.2 s of 900,000 rows). A json value goes into to_json as it is.
select
    h.snapshot_id, 'service' as resource_type, h.service_id as resource_id,
    s.name as resource_name, h.team_id, h.project_id, h.environment_id, h.service_id,
    case when h.previous is not null and h.increase >= $min_increase then 'alarm'
        when h.restarts is null then 'unknown'
        when h.previous_pods is null and h.previous_uncollected then 'unknown'
        when h.previous_pods is not null and (h.previous is null or h.uncounted > 0)
            then 'unknown'
        else 'ok' end as status,
    concat('Service ', coalesce(s.name, h.service_id), case
        when h.restarts is null then concat(' reports no restart count (replicas: ', h.pods,
            '): not judged.')
        else concat(' has ', h.restarts, ' restarts (replicas: ', h.pods, '), ', case
            when h.previous_seq is null then 'its first count'
            when h.previous_pods is null then concat('none counted at the previous snapshot (',
                t.text, ')', if(h.previous_uncollected, concat(', where',
                    ' its replicas were not all collected, so the restarts since are unknown:',
                    ' not judged'), ''))
            when h.previous is null then concat('no count reported at the previous snapshot (',
                t.text, '), so the restarts since are unknown: not judged')
            else concat(coalesce(h.increase::varchar, 'an unknown number'),
                ' more since the previous snapshot (', t.text, ', when it had ', h.previous, ')',
                if(h.fresh > 0, concat(', counting ', h.fresh, ' replica(s) new or reset since',
                    ' then from zero'), ''),
                if(h.uncounted > 0 and not coalesce(h.increase >= $min_increase, false),
                    concat(', not counting ', h.uncounted, ' replica(s) whose count is not',
                        ' reported: not judged'), ''))
        end, '.')
    end) as reason,
    -- the evidence's JSON written out: numbers and a JSON time, no text to escape (to_json of
    -- a struct_pack took a sixth of the check)
    concat('{"restarts":', coalesce(h.restarts::varchar, 'null'),
        ',"previous":', coalesce(h.previous::varchar, 'null'),
        ',"increase":', coalesce(h.increase::varchar, 'null'),
        ',"previous_at":', coalesce(t.json::varchar, 'null'), ',"pods":', h.pods,
        ',"new_or_reset":', h.fresh, ',"not_reported":', h.uncounted,
        ',"min_increase":', to_json($min_increase), '}') as evidence
from replica_restarts as h
left join services as s on s.snapshot_id = h.snapshot_id and s.id = h.service_id
left join times as t on t.snapshot_at = h.previous_at
