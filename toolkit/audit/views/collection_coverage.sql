-- Each snapshot with whether its collection saw everything the checks judge absence from.
-- inventory_complete: no listing of teams, projects, environments or services failed, so a
-- resource missing from the snapshot is missing from the platform (a failed listing leaves
-- out everything below it); variables_complete: that, and no variables call failed either.
-- A 404 for what the collecting key may not see is no failure (platform-api section 5, rule
-- 6: a limited key is told 404 outside its limits; the crawler records it as not_visible and
-- keeps the snapshot complete), so it leaves both true, as the engine counts partial ones.
-- variables_all_seen: variables_complete, and no variables call answered 404 either: a check
-- that says a value is nowhere else (a copy, a shadow, a share) needs every level's values,
-- and a level hidden from the key may hold one.
create or replace view collection_coverage as
select s.snapshot_id,
    not coalesce(e.unlisted, false) as inventory_complete,
    not coalesce(e.unlisted or e.variables_failed, false) as variables_complete,
    not coalesce(e.unlisted or e.variables_failed or h.variables_hidden, false)
        as variables_all_seen
from snapshots as s
left join (
    select snapshot_id,
        bool_or(endpoint in ('teams.list', 'projects.list', 'environments.list',
            'services.list')) as unlisted,
        bool_or(endpoint = 'variables.list') as variables_failed
    from collection_errors
    where not coalesce(not_visible, false)
    group by snapshot_id
) as e on e.snapshot_id = s.snapshot_id
left join (
    select snapshot_id, true as variables_hidden
    from collection_errors
    where endpoint = 'variables.list' and coalesce(not_visible, false)
    group by snapshot_id
) as h on h.snapshot_id = s.snapshot_id
