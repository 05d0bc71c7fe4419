-- Whether a collection error covers a resource: each owner id the error names (team,
-- project, environment, service) is the resource's own, and an id the error lacks covers
-- every child (a failed listing of a project's environments covers all of them). A null id
-- of the resource matches any id of the error: pass null where errors below that level
-- count too (VAR002 needs the variables of every service of the environment). The one rule
-- for "this failed call may have left the resource's data short": diff's services not
-- collected, replica_events_uncollected, REP003 and VAR002. A scalar macro:
-- error_covers(e.team_id, e.project_id, e.environment_id, e.service_id,
--              s.team_id, s.project_id, s.environment_id, s.id).
create or replace macro error_covers(error_team, error_project, error_environment,
        error_service, team, project, environment, service) as
    coalesce(error_team = team, true) and coalesce(error_project = project, true)
    and coalesce(error_environment = environment, true)
    and coalesce(error_service = service, true)
