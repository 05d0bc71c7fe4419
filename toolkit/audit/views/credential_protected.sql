-- Each protected variable whose value a key can read, per snapshot: the key reads the
-- values (credential_reach.can_read_values) of a team, project, environment or service
-- whose variable holds it (protected_holders). service_id and name say which protected
-- variable; by_reference: the key reads it only through a reference in a variable it can
-- read, never directly. One row per key and protected variable; a key whose role or scope
-- is unknown has none (credential_known). KEY004 reads it.
create or replace view credential_protected as
with readable as (  -- owners (team, project, environment, service) whose values the key reads
    select snapshot_id, credential_name, resource_type, resource_id
    from credential_reach where can_read_values
),
exposed as (
    select r.snapshot_id, r.credential_name, h.service_id, h.name, h.by_reference
    from protected_holders h join readable r on r.snapshot_id = h.snapshot_id
        and r.resource_type = h.level and r.resource_id = h.owner
)
-- each protected variable once, "by reference" only when not readable directly
select snapshot_id, credential_name, service_id, name, bool_and(by_reference) as by_reference
from exposed group by all
