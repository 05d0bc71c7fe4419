-- The one rule for a variable's identity, so the views and checks that build it agree in
-- their joins (owned_variables, references_out, VAR002). Scalar macros:
-- owner_of(level, team_id, project_id, environment_id, service_id): the id of the team,
--   project, environment or service the variable's level names (a service's otherwise);
-- variable_key(level, owner_id, name): its variable_id, '<level>:<owner id>:<name>', with
--   '?' for an owner id that is missing.
create or replace macro owner_of(level, team, project, environment, service) as
    case level when 'team' then team when 'project' then project
        when 'environment' then environment else service end;
create or replace macro variable_key(level, owner, name) as
    level || ':' || coalesce(owner, '?') || ':' || name;
