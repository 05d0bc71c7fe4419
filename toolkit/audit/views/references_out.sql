-- References that leave their variable's environment: to a service of another environment
-- (the reference names its id), or to a project's or team's variable (the referencing
-- variable's own project or team). Each with the referencing variable's identity
-- (variable_id, views/ids_of_variables.sql), its environment's name and production flag,
-- and the variable referenced (source_type, source_owner, key; its source_variable_id). A reference within its environment
-- (${{environment.KEY}}, a service of the same environment) is not here, nor one from a
-- variable above environments. VAR007 matches them to the secrets they read.
create or replace view references_out as
select r.snapshot_id,
    variable_key(r.level, owner_of(r.level, r.team_id, r.project_id, r.environment_id,
        r.service_id), r.variable_name) as variable_id,
    r.variable_name as name, r.team_id, r.project_id, r.environment_id, r.service_id,
    e.resource_name as environment_name, e.is_production, r.token,
    -- the variable referenced: its level, owner and name, and its variable_id
    r.source_type, coalesce(r.source_id, case r.source_type
        when 'project' then r.project_id when 'team' then r.team_id end) as source_owner,
    r.key, variable_key(r.source_type, source_owner, r.key) as source_variable_id
from variable_references as r
left join services as v on v.snapshot_id = r.snapshot_id and v.id = r.source_id
left join all_resources as e on e.snapshot_id = r.snapshot_id
    and e.resource_type = 'environment' and e.resource_id = r.environment_id
where r.environment_id is not null and (r.source_type in ('project', 'team')
    or (r.source_type = 'service' and v.environment_id is distinct from r.environment_id))
