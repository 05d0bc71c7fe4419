-- Protected service variables (level 'service', is_protected) whose scope a variables.list
-- call that failed or answered 404 covers, so a same-named variable there (one that would
-- shadow it: protected_variable_shadows) may not have been seen. The calls counted are those
-- for the variable's team, project or environment, or for any service of its environment
-- (error_covers.sql, passed no service). failed: one of them failed; false where each
-- answered 404 (hidden from the collecting key: the snapshot is complete, but those
-- variables were not read). A failed listing is not here (collection_coverage). VAR002
-- reads it.
create or replace view protected_scope_uncollected as
with protected as (
    select snapshot_id, variable_id, team_id, project_id, environment_id
    from owned_variables where level = 'service' and is_protected
)
-- "defined only by its service" needs every variable of its team, project, environment
-- and that environment's services: not where a variables call for one of them failed or
-- answered 404 (hidden from the collecting key); nor where a listing failed (VAR002)
select p.snapshot_id, p.variable_id, bool_or(not coalesce(e.not_visible, false)) as failed
from protected p
join collection_errors e on e.snapshot_id = p.snapshot_id
where e.endpoint = 'variables.list' and error_covers(e.team_id, e.project_id,
    e.environment_id, e.service_id, p.team_id, p.project_id, p.environment_id, null)
group by all
