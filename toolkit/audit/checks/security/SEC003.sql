-- id: SEC003
-- title: Service exposes a NodePort
-- severity: medium
-- area: security
-- risk: A NodePort opens the service on every node's address, bypassing the platform's routing, TLS and access controls.
-- remediation: Expose the service through a host (ingress) or keep it internal; remove the NodePort.
with nodeports as (
    -- configured and detected ports repeat each other: one row per exposed port
    select distinct snapshot_id, service_id, port, node_port, protocol
    from service_ports where is_nodeport
)
select
    s.snapshot_id, 'service' as resource_type, s.id as resource_id, s.name as resource_name,
    s.team_id, s.project_id, s.environment_id, s.id as service_id,
    case when count(p.service_id) > 0 then 'alarm' else 'ok' end as status,
    case when count(p.service_id) > 0
        then 'Service ' || s.name || ' exposes ' || count(p.service_id) || ' NodePort(s): '
            || string_agg(coalesce(p.node_port::varchar, '?') || ' -> ' || coalesce(p.port::varchar, '?')
                || '/' || coalesce(p.protocol, '?'), ', ' order by p.node_port) || '.'
        else 'Service ' || s.name || ' exposes no NodePort.'
    end as reason,
    to_json(struct_pack(nodeports := coalesce(list(struct_pack(p.port, p.node_port, p.protocol)
        order by p.node_port) filter (where p.service_id is not null), []))) as evidence
from services s
left join nodeports p on p.snapshot_id = s.snapshot_id and p.service_id = s.id
group by 1, 2, 3, 4, 5, 6, 7, 8
