-- Variables with a readable identity (variable_id = '<level>:<owner id>:<name>') and the id
-- of their owner. variable_items adds their environment; checks that need no environment
-- read this view and skip that join.
create or replace view owned_variables as
with owned as (
    select
        v.*,
        case v.level
            when 'team' then v.team_id
            when 'project' then v.project_id
            when 'environment' then v.environment_id
            else v.service_id
        end as owner_id
    from variables v
)
select o.*, o.level || ':' || coalesce(o.owner_id, '?') || ':' || o.name as variable_id
from owned o
