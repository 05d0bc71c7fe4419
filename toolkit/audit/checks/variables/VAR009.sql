-- id: VAR009
-- title: Variable values were not collected
-- severity: info
-- area: variables
-- risk: With values redacted (a viewer key collected the snapshot) copied, shared and stale secrets cannot be seen: VAR003 and VAR007 say nothing for this snapshot, and VAR008 goes by update times alone (a re-save with the same value passes for a rotation) and judges neither a plain secret whose references were not listed (it may be one) nor a secret without update times.
-- remediation: Collect snapshots with an editor key, so values are fingerprinted (never stored).
-- history: snapshot
select
    v.snapshot_id, 'snapshot' as resource_type, 'variable-values' as resource_id,
    'variable values of ' || coalesce(any_value(sn.credential_name), 'the collecting credential')
        as resource_name,
    null::varchar as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id,
    case when bool_or(v.values_redacted) then 'alarm' else 'ok' end as status,
    case when bool_or(v.values_redacted)
        then 'Values of ' || count(*) filter (where v.values_redacted) || ' of ' || count(*)
            || ' variables were redacted; collect with an editor key to audit secrets.'
        else 'Values of all ' || count(*) || ' variables were fingerprinted.'
    end as reason,
    to_json(struct_pack(variables := count(*),
        redacted := count(*) filter (where v.values_redacted),
        credential := any_value(sn.credential_name))) as evidence
from variables v
join snapshots sn on sn.snapshot_id = v.snapshot_id
group by v.snapshot_id
