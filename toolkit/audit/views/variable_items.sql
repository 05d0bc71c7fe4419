-- Variables with a readable identity (owned_variables), and their environment's name and
-- production flag (null above environments).
create or replace view variable_items as
select o.*, e.resource_name as environment_name, e.is_production
from owned_variables o
left join all_resources e
    on e.snapshot_id = o.snapshot_id and e.resource_type = 'environment'
    and e.resource_id = o.environment_id
