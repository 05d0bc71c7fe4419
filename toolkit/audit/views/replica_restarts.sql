-- Each service's replica restarts at each committed snapshot listing its replicas: how many
-- replicas (pods) and restarts it reports, how many more since the previous snapshot
-- (increase), and the service's replicas and count there (previous_pods: null when it had
-- no replicas there; previous: null then, or when none of them reported a count).
-- Restarts are counted per replica as a counter: a replica new since then, or whose count
-- went down (reset), restarted as often as it counts now (fresh counts those replicas); a
-- service-wide sum would hide one replica rising while another is replaced. uncounted: the
-- replicas whose increase is unknown (no count now, or none then for a replica kept). With
-- the service's owner ids (from its replicas) and previous_uncollected: a failed call may
-- have left its replicas out of the previous snapshot, so no count there is no evidence of
-- none. REP003 reads it.
create or replace view replica_restarts as
with seqs as (
    -- each snapshot and the committed one before it (the tables' views show committed
    -- snapshots' rows only). Not filtered here: DuckDB guessed a fifth of the snapshots
    -- committed, and each join with them cut its guess of the rows by as much (1,073 for
    -- 90,000), so it built its hash tables on the history, not on the services and owners.
    select snapshot_id, seq,
        lag(if(status in ('complete', 'partial'), seq, null) ignore nulls)
            over (order by seq) as previous_seq,
        lag(if(status in ('complete', 'partial'), snapshot_at, null) ignore nulls)
            over (order by seq) as previous_at
    from snapshots
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
    select
        seq, service_id, any_value(previous_seq) as previous_seq, count(*) as pods,
        sum(restart_count) as restarts,  -- null when no replica reports a count
        sum(increase) as increase,
        count(*) filter (where not kept or restart_count < count_then) as fresh,
        count(*) - count(increase) as uncounted
    from (
        select *, case
            when not kept or restart_count < count_then then restart_count
            else restart_count - count_then  -- null when the count then is unknown
        end as increase
        from pods
    )
    group by seq, service_id
),
history as (  -- the service's replicas and count at the previous snapshot (none: no replicas)
    select r.*, s.snapshot_id, s.previous_at, p.pods as previous_pods, p.restarts as previous
    from restarts as r
    join seqs as s using (seq)
    left join restarts as p on p.service_id = r.service_id and p.seq = r.previous_seq
),
ids as (
    -- A service's owner ids, from its replicas: a snapshot may hold replicas of a service its
    -- services list lacks (created in between, or that list failed). No API moves a service,
    -- so every snapshot's replicas name the same ones. Read once per service, not carried
    -- through the 1.3 million replica rows above: that cost a sixth of REP003.
    select service_id, any_value(team_id) as team_id, any_value(project_id) as project_id,
        any_value(environment_id) as environment_id
    from replicas group by service_id
),
owners as (
    -- And the snapshots whose failed calls may have left its replicas out: a replicas listing
    -- or health call, or a listing of the hierarchy above it, that covers the service
    -- (views/error_covers.sql; a 404 is what the key may not see, no failure).
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
)
select h.snapshot_id, h.service_id, o.team_id, o.project_id, o.environment_id, h.seq,
    h.previous_seq, h.previous_at, h.pods, h.restarts, h.previous_pods, h.previous,
    h.increase, h.fresh, h.uncounted,
    list_contains(o.blind_seqs, h.previous_seq) as previous_uncollected
from history as h
left join owners as o on o.service_id = h.service_id
