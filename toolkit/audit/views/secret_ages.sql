-- How long each secret variable has held its value, per snapshot: the variables that are
-- secrets (protected ones of min_length characters or more, or of an unknown length, and
-- plain ones named like a secret: views/secret_name.sql; never references), when their value
-- last changed (changed_at: the last update time, or the value's first sighting when it
-- outlived its updates or none are reported; by_sighting says which) and age_days, whole
-- days from then to the snapshot. at_least: an age from a first sighting in the first
-- snapshot read, the first under a new fingerprint key (after_new_key), or the variable's
-- first value read after rows that did not read it (after_unread), is a lower bound.
-- ref_unknown: a plain variable whose value was redacted may be a reference. A table macro,
-- as what is a secret is the calling check's parameters:
-- from secret_ages($min_length, $secret_names, $not_secret_names). VAR008 reads it.
-- The rows judged (views/judging.sql) are read whole; the first sightings read the whole
-- history narrow, grouped before a name is matched against the patterns.
create or replace macro secret_variable(name, is_protected, long_enough, secret_names,
        not_secret_names) as
    secret_name(name, secret_names, not_secret_names)
    -- a length unknown (values hidden from the collecting key) is judged, as before
    or (coalesce(is_protected, false) and coalesce(long_enough, true));
create or replace macro secret_ages(min_length, secret_names, not_secret_names) as table
with secrets as (
    select snapshot_id, snapshot_at, variable_id, name, team_id, project_id, environment_id,
        service_id, fingerprint, is_reference, values_redacted,
        -- a plain variable not known to be no reference (value redacted, no references
        -- listed) may be the reference VAR004 asks for: 'unknown', as there, never an alarm
        is_reference is null and not coalesce(is_protected, false) as ref_unknown,
        -- list functions: no subquery over unnest() per row
        list_max(list_transform(updates, lambda u: try_cast(u as timestamptz))) as last_update
    from owned_variables
    where judging(snapshot_id) and not coalesce(is_reference, false) and secret_variable(
        name, is_protected, value_length >= min_length, secret_names, not_secret_names)
),
sightings as (  -- each value's first sighting per variable and what makes it a secret:
    -- grouped on the columns as read, its identity built after (owned_variables' macros)
    select variable_key(level, owner_of(level, team_id, project_id, environment_id,
            service_id), name) as variable_id,
        name, fingerprint, is_protected, long_enough, seen
    from (
        select level, team_id, project_id, environment_id, service_id, name, fingerprint,
            is_protected, value_length >= min_length as long_enough, min(snapshot_at) as seen
        from variables
        where not coalesce(is_reference, false)
        group by all
    )
),
rekeyed as (
    -- snapshots whose fingerprints are under another HMAC key than the one before (a key file
    -- lost and made again): no value's fingerprint matches one from before them
    select snapshot_at from (
        select snapshot_at, json_extract_string(extra, '$.fingerprint_key') as key_id,
            lag(key_id) over (order by seq) as key_before
        from snapshots where status in ('complete', 'partial'))
    where key_id <> key_before
),
first_seen as (  -- a group by, not a window over every row: each value's first sighting
    select variable_id, fingerprint, min(seen) as fingerprint_seen,
        -- in the first snapshot read (the store's first, or the few a latest-only audit
        -- reads), or the first under a new key: the value may be far older, so an age
        -- counted from there is a lower bound
        fingerprint_seen = (select min(snapshot_at) from snapshots) as seen_first,
        fingerprint_seen in (select snapshot_at from rekeyed) as after_new_key,
        -- or the variable's first value read after rows that did not read it (a viewer
        -- key's, values redacted, before an editor key's: a group of their own, fingerprint
        -- null, which no row joins): it may be as old as the first of them
        fingerprint_seen = min(if(fingerprint is null, null, fingerprint_seen))
                over (partition by variable_id)
            and min(fingerprint_seen) over (partition by variable_id) < fingerprint_seen
            as after_unread
    from sightings
    where secret_variable(name, is_protected, long_enough, secret_names, not_secret_names)
    group by variable_id, fingerprint
)
select s.*,
    -- a value seen before its last update outlived it (a re-save or re-create with the
    -- same value; or the update restored an old value): no new secret, so count from its
    -- first sighting, as when there are no update times
    coalesce(f.fingerprint_seen < s.last_update, s.last_update is null) as by_sighting,
    case when by_sighting then f.fingerprint_seen else s.last_update end as changed_at,
    -- whole days elapsed, the one number both the status and the reason use (epoch
    -- seconds: calendar arithmetic on timestamptz is slow)
    floor((epoch(s.snapshot_at) - epoch(changed_at)) / 86400)::bigint as age_days,
    by_sighting and (f.seen_first or f.after_new_key or f.after_unread) as at_least,
    f.after_new_key, f.after_unread
from secrets s
left join first_seen f on f.variable_id = s.variable_id and f.fingerprint = s.fingerprint
