-- id: VAR008
-- title: Secret not rotated within the rotation period
-- severity: medium
-- area: variables
-- risk: A long-lived secret has had the longest time to leak through logs, laptops and former staff, and nobody knows whether rotating it still works.
-- remediation: Rotate the secret and record the rotation; automate it where the owning service allows.
-- history: all
-- param: max_age_days = 90 | a secret unchanged for more than this many whole days is flagged
-- param: min_length = 12 | protected values shorter than this many characters are not judged unless their name looks like a secret (as VAR003, VAR007): protected variables also hold user names, database names, hosts and ports (postgres, localhost, 5432) that need no rotation, while generated credentials are longer
-- param: secret_names = {SECRET_NAMES} | comma-separated regular expressions (case-insensitive); protected variables and variables whose name matches one, and none of not_secret_names, are secrets
-- param: not_secret_names = {NOT_SECRET_NAMES} | comma-separated regular expressions (case-insensitive); a name matching one is no secret's name even if it matches secret_names: a setting about a secret (its id, name, file, path, length or lifetime, or where it is fetched or sent: OAUTH_TOKEN_URL, TOKEN_ENDPOINT, API_KEY_HEADER; a password inside a URL is VAR010's), GOOGLE_APPLICATION_CREDENTIALS (a file path), the shell's PWD and OLDPWD
-- Each secret's value age: see views/secret_ages.sql
with aged as (from secret_ages($min_length, $secret_names, $not_secret_names))
select
    snapshot_id, 'variable' as resource_type, variable_id as resource_id, name as resource_name,
    team_id, project_id, environment_id, service_id,
    case when ref_unknown or changed_at is null then 'unknown'
        when age_days > $max_age_days then 'alarm'
        when at_least then 'unknown'  -- within the limit so far, but maybe not in truth
        else 'ok' end as status,
    case when ref_unknown or changed_at is null
        then concat('Secret ', name, ': its value was ',
            if(values_redacted, 'redacted', 'not collected'),
            if(ref_unknown, ', so whether it is a reference is unknown',
                ' and it has no update times, so when it last changed is unknown'), ': not judged.')
        when not by_sighting
        then concat('Secret ', name, ' was last changed ', age_days,
            ' days before the snapshot (limit ', $max_age_days, ').')
        else concat('Secret ', name, ' has held the same value ',  -- one flat concat: cheaper
            if(at_least, if(after_new_key, 'since at least the fingerprint key changed, ',
                if(after_unread, 'since at least it was first read (not read before), ',
                    'since at least the first snapshot read, ')), 'for at least '), age_days,
            if(at_least, ' days before this one (limit ', ' days (limit '), $max_age_days,
            if(last_update is null, '; no update times', '; its last update, on '),
            last_update::date, if(last_update is null, '', ', kept the value'),
            if(at_least, ')', ', so counted from its first snapshot)'),
            if(at_least and age_days <= $max_age_days, ': it may be older, not judged.', '.'))
    end as reason,
    -- no second timestamp (the update that kept the value is in the reason): each costs
    to_json(struct_pack(changed_at, basis := if(by_sighting, 'first_seen', 'updates'), age_days,
        lower_bound := at_least)) as evidence
from aged
