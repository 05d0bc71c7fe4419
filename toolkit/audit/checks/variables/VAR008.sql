-- id: VAR008
-- title: Secret not rotated within the rotation period
-- severity: medium
-- area: variables
-- risk: A long-lived secret has had the longest time to leak through logs, laptops and former staff, and nobody knows whether rotating it still works.
-- remediation: Rotate the secret and record the rotation; automate it where the owning service allows.
-- history: all
-- param: max_age_days = 90 | a secret unchanged for more than this many whole days is flagged
-- param: min_length = 12 | protected values shorter than this many characters are not judged unless their name looks like a secret (as VAR003, VAR007): protected variables also hold user names, database names, hosts and ports (postgres, localhost, 5432) that need no rotation, while generated credentials are longer
-- param: secret_names = passw(or)?d,passphrase,_pass(_.*)?$,pwd(_.*)?$,secret,token(_.*)?$,credential,api_?keys?(_.*)?$,app_?keys?(_.*)?$,access_?keys?(_.*)?$,master_?keys?(_.*)?$,private_?keys?(_.*)?$,signing_?keys?(_.*)?$,encryption_?keys?(_.*)?$,jwt_?keys?(_.*)?$ | comma-separated regular expressions (case-insensitive); protected variables and variables whose name matches one, and none of not_secret_names, are secrets
-- param: not_secret_names = ^(old)?pwd$,application_credentials$,_id$,_name$,_file$,_path$,_dir$,_len(gth)?$,_ttl$,_seconds?$,_minutes?$,_hours?$,_days?$,_expir[a-z]*$ | comma-separated regular expressions (case-insensitive); a name matching one is no secret's name even if it matches secret_names: a setting about a secret (its id, name, file, path, length or lifetime), GOOGLE_APPLICATION_CREDENTIALS (a file path), the shell's PWD and OLDPWD
with secrets as (
    select snapshot_id, snapshot_at, variable_id, name, team_id, project_id, environment_id,
        service_id, fingerprint,  -- list functions: no subquery over unnest() per row
        list_max(list_transform(updates, lambda u: try_cast(u as timestamptz))) as last_update
    from owned_variables
    where not coalesce(is_reference, false)
      and (secret_name(name, $secret_names, $not_secret_names)
           -- a length unknown (values hidden from the collecting key) is judged, as before
           or (coalesce(is_protected, false) and coalesce(value_length >= $min_length, true)))
),
first_seen as (  -- a group by, not a window over every row; only values without updates need it
    select variable_id, fingerprint, min(snapshot_at) as fingerprint_seen
    from secrets
    group by variable_id, fingerprint
    having bool_or(last_update is null)
),
aged as (
    select s.*, coalesce(s.last_update, f.fingerprint_seen) as changed_at,
        -- whole days elapsed, the one number both the status and the reason use (epoch
        -- seconds: calendar arithmetic on timestamptz is slow)
        floor((epoch(s.snapshot_at) - epoch(changed_at)) / 86400)::bigint as age_days,
        case when s.last_update is not null then 'updates' else 'first_seen' end as basis
    from secrets s
    left join first_seen f on f.variable_id = s.variable_id and f.fingerprint = s.fingerprint
)
select
    snapshot_id, 'variable' as resource_type, variable_id as resource_id, name as resource_name,
    team_id, project_id, environment_id, service_id,
    case when age_days > $max_age_days then 'alarm' else 'ok' end as status,
    case when basis = 'updates'
        then 'Secret ' || name || ' was last changed ' || age_days
            || ' days before the snapshot (limit ' || $max_age_days || ').'
        else 'Secret ' || name || ' has held the same value for at least ' || age_days
            || ' days (limit ' || $max_age_days || '; no update times, so counted from its first snapshot).'
    end as reason,
    to_json(struct_pack(changed_at, basis, age_days)) as evidence
from aged
where changed_at is not null
