-- id: SEC002
-- title: Container adds dangerous capabilities
-- severity: high
-- area: security
-- risk: Capabilities such as SYS_ADMIN or NET_ADMIN let a compromised container escape to the node, sniff traffic or load kernel modules.
-- remediation: Drop the capability, or replace it with a narrower one the service really needs.
-- history: snapshot
-- param: dangerous = SYS_ADMIN,NET_ADMIN,SYS_PTRACE,SYS_MODULE,DAC_READ_SEARCH,NET_RAW,ALL | comma-separated capability names (with or without CAP_) that are flagged when added
with judged as (
    select *,
        list_sort(list_intersect(
            list_transform(coalesce(capabilities_add, []),
                lambda c: regexp_replace(upper(trim(c)), '^CAP_', '')),
            list_transform(string_split($dangerous, ','),
                lambda d: regexp_replace(upper(trim(d)), '^CAP_', '')))) as flagged
    from services
    -- neither member of the security context reported: nothing is known of it (as SEC001);
    -- a context reported without capabilities to add adds none
    where capabilities_add is not null or privileged is not null
)
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when len(flagged) > 0 then 'alarm' else 'ok' end as status,
    case when len(flagged) > 0
        then 'Service ' || coalesce(name, id) || ' adds ' || len(flagged) || ' dangerous capability(ies): '
            || array_to_string(flagged, ', ') || '.'
        else 'Service ' || coalesce(name, id) || ' adds ' || len(coalesce(capabilities_add, []))
            || ' capability(ies), none of them dangerous.'
    end as reason,
    to_json(struct_pack(capabilities_add, flagged, privileged)) as evidence
from judged
