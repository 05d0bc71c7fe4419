-- id: REP003
-- title: Replica restarts keep rising
-- severity: medium
-- area: replicas
-- risk: Replicas that keep restarting drop requests on every restart and hide a crash or an OOM that will get worse under load.
-- remediation: Read the replica events and logs for why the containers exit, and fix the cause.
-- history: previous
-- param: min_increase = 5 | restarts since the previous snapshot that raise an alarm
with seqs as (  -- each committed snapshot and the one before it
    select snapshot_id, seq, lag(seq) over (order by seq) as previous_seq,
        lag(snapshot_at) over (order by seq) as previous_at
    from snapshots where status in ('complete', 'partial')
),
counted as materialized (  -- each replica's count, with its snapshot's place in the chain
    -- (integers: the snapshot's id and time are joined to the 900,000 service rows at the end)
    select r.service_id, r.runtime_name, r.restart_count, s.seq, s.previous_seq
    from replicas as r join seqs as s using (snapshot_id)
),
pods as (
    -- and its count at the previous snapshot, if it was listed there under its name (its
    -- creation time is no test: platforms report a container's last start there, which moves
    -- on every restart; a new pod's count starting again below the old one reads as a reset).
    -- Hash joins on the snapshot's integer place: cheaper than a window over every replica.
    select c.*, p.seq is not null as kept, p.restart_count as count_then
    from counted as c left join counted as p on p.service_id = c.service_id
        and p.runtime_name = c.runtime_name and p.seq = c.previous_seq
),
restarts as (
    -- Restarts since the previous snapshot, counted per replica as a counter: a replica new
    -- since then, or whose count went down (reset), restarted as often as it counts now. A
    -- service-wide sum would hide one replica rising while another is replaced.
    select
        seq, service_id, any_value(previous_seq) as previous_seq, count(*) as pods,
        sum(restart_count) as restarts,  -- null when no replica reports a count
        sum(case
            when not kept or restart_count < count_then then restart_count
            else restart_count - count_then  -- null when the count then is unknown
        end) as increase,
        count(*) filter (where not kept or restart_count < count_then) as fresh
    from pods
    group by seq, service_id
),
history as (  -- the service's count at the previous snapshot: none if it had no replicas there
    select r.*, s.snapshot_id, s.previous_at, p.restarts as previous
    from restarts as r
    join seqs as s using (seq)
    left join restarts as p on p.service_id = r.service_id and p.seq = r.previous_seq
),
ids as (
    -- A service's owner ids, from its replicas: a snapshot may hold replicas of a service its
    -- services list lacks (created in between, or that list failed). No API moves a service,
    -- so every snapshot's replicas name the same ones. Read once per service, not carried
    -- through the 1.3 million replica rows above: that cost a sixth of the check.
    select service_id, any_value(team_id) as team_id, any_value(project_id) as project_id,
        any_value(environment_id) as environment_id
    from replicas group by service_id
),
owners as (
    -- And the snapshots whose failed calls may have left its replicas out: a replicas listing
    -- or health call, or a listing of the hierarchy above it, that covers the service
    -- (views/error_covers.sql; a 404 is what the key may not see, no failure). No count
    -- there is no evidence that it had no replicas: the restarts since cannot be told, so
    -- they are not judged (docs/checks.md).
    -- A list per service, read in the join with owners: a join of its own cost 0.6 s.
    select i.*, m.blind_seqs
    from ids as i
    left join (
        select i.service_id, list(distinct s.seq) as blind_seqs
        from collection_errors as e
        join seqs as s using (snapshot_id)
        join ids as i on error_covers(e.team_id, e.project_id, e.environment_id, e.service_id,
            i.team_id, i.project_id, i.environment_id, i.service_id)
        where e.endpoint in ('replicas.list', 'replicas.health', 'teams.list', 'projects.list',
                'environments.list', 'services.list')
            and not coalesce(e.not_visible, false)
        group by i.service_id
    ) as m using (service_id)
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
    s.name as resource_name, o.team_id, o.project_id, o.environment_id, h.service_id,
    case when h.previous is not null and h.increase >= $min_increase then 'alarm'
        when h.previous is null and list_contains(o.blind_seqs, h.previous_seq) then 'unknown'
        else 'ok' end as status,
    concat('Service ', coalesce(s.name, h.service_id), case
        when h.restarts is null then concat(' reports no restart count (replicas: ', h.pods, ').')
        else concat(' has ', h.restarts, ' restarts (replicas: ', h.pods, '), ', case
            when h.previous_seq is null then 'its first count'
            when h.previous is null then concat('none counted at the previous snapshot (',
                t.text, ')', if(list_contains(o.blind_seqs, h.previous_seq), concat(', where',
                    ' its replicas were not all collected, so the restarts since are unknown:',
                    ' not judged'), ''))
            else concat(coalesce(h.increase::varchar, 'an unknown number'),
                ' more since the previous snapshot (', t.text, ', when it had ', h.previous, ')',
                if(h.fresh > 0, concat(', counting ', h.fresh, ' replica(s) new or reset since',
                    ' then from zero'), ''))
        end, '.')
    end) as reason,
    to_json(struct_pack(h.restarts, h.previous, h.increase, previous_at := t.json, h.pods,
        new_or_reset := h.fresh, min_increase := $min_increase)) as evidence
from history as h
left join services as s on s.snapshot_id = h.snapshot_id and s.id = h.service_id
left join times as t on t.snapshot_at = h.previous_at
left join owners as o on o.service_id = h.service_id
