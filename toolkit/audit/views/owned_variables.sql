-- Variables with a readable identity (variable_id = '<level>:<owner id>:<name>') and the id
-- of their owner (views/ids_of_variables.sql). variable_items adds their environment;
-- checks that need no environment read this view and skip that join.
create or replace view owned_variables as
with owned as (
    select v.*, owner_of(v.level, v.team_id, v.project_id, v.environment_id, v.service_id)
        as owner_id
    from variables v
)
select o.*, variable_key(o.level, o.owner_id, o.name) as variable_id
from owned o
