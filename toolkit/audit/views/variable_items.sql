-- Variables with a readable identity (variable_id = '<level>:<owner id>:<name>'), the id of
-- their owner, and their environment's name and production flag (null above environments).
create or replace view variable_items as
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
select
    o.*,
    o.level || ':' || coalesce(o.owner_id, '?') || ':' || o.name as variable_id,
    e.resource_name as environment_name,
    e.is_production
from owned o
left join all_resources e
    on e.snapshot_id = o.snapshot_id and e.resource_type = 'environment'
    and e.resource_id = o.environment_id
