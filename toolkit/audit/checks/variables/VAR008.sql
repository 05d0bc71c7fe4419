-- id: VAR008
-- title: Secret not rotated within the rotation period
-- severity: medium
-- area: variables
-- risk: A long-lived secret has had the longest time to leak through logs, laptops and former staff, and nobody knows whether rotating it still works.
-- remediation: Rotate the secret and record the rotation; automate it where the owning service allows.
-- param: max_age_days = 90 | a secret unchanged for longer than this many days is flagged
-- param: secret_names = passw(or)?d,pwd,secret,token,api_?key,private_?key,credential | comma-separated regular expressions (case-insensitive); protected variables and variables whose name matches one are secrets
with secrets as (
    select v.*,
        (select max(try_cast(u as timestamptz)) from unnest(v.updates) as t(u)) as last_update,
        min(v.snapshot_at) over (partition by v.variable_id, v.fingerprint) as fingerprint_seen
    from variable_items v
    where not coalesce(v.is_reference, false)
      and (coalesce(v.is_protected, false)
           or regexp_matches(v.name, '(?i)(' || replace($secret_names, ',', '|') || ')'))
),
aged as (
    select *,
        case when last_update is not null then last_update
             when fingerprint is not null then fingerprint_seen end as changed_at,
        case when last_update is not null then 'updates' else 'first_seen' end as basis
    from secrets
)
select
    snapshot_id, 'variable' as resource_type, variable_id as resource_id, name as resource_name,
    team_id, project_id, environment_id, service_id,
    case when changed_at < snapshot_at - to_days($max_age_days) then 'alarm' else 'ok' end as status,
    case when basis = 'updates'
        then 'Secret ' || name || ' was last changed ' || date_diff('day', changed_at, snapshot_at)
            || ' days before the snapshot (limit ' || $max_age_days || ').'
        else 'Secret ' || name || ' has held the same value for at least ' || date_diff('day', changed_at, snapshot_at)
            || ' days (limit ' || $max_age_days || '; no update times, so counted from its first snapshot).'
    end as reason,
    to_json(struct_pack(changed_at, basis, age_days := date_diff('day', changed_at, snapshot_at))) as evidence
from aged
where changed_at is not null
