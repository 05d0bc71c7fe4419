-- id: SEC003
-- title: Service exposes a NodePort
-- severity: medium
-- area: security
-- risk: A NodePort opens the service on every node's address, bypassing the platform's routing, TLS and access controls.
-- remediation: Expose the service through a host (ingress) or keep it internal; remove the NodePort.
-- history: snapshot
with nodeports as (
    -- configured and detected ports repeat each other, one of them perhaps without its node
    -- port or its protocol (TCP, as Kubernetes defaults it), or in another case: one row per
    -- exposed port and protocol
    select snapshot_id, service_id, port, max(node_port) as node_port,
        max(upper(protocol)) as protocol
    from service_ports where is_nodeport
    group by snapshot_id, service_id, port, coalesce(upper(protocol), 'TCP')
),
exposed as (  -- few services expose NodePorts: aggregate them before joining every service
    -- (port and protocol only break ties between equal node ports, which had no set order)
    select snapshot_id, service_id, count(*) as ports,
        string_agg(coalesce(node_port::varchar, '?') || ' -> ' || coalesce(port::varchar, '?')
            || '/' || coalesce(protocol, '?'), ', ' order by node_port, port, protocol) as listing,
        list(struct_pack(port, node_port, protocol) order by node_port, port, protocol) as nodeports
    from nodeports
    group by snapshot_id, service_id
)
select
    s.snapshot_id, 'service' as resource_type, s.id as resource_id, s.name as resource_name,
    s.team_id, s.project_id, s.environment_id, s.id as service_id,
    case when p.ports > 0 then 'alarm' else 'ok' end as status,
    case when p.ports > 0
        then 'Service ' || coalesce(s.name, s.id) || ' exposes ' || p.ports || ' NodePort(s): ' || p.listing || '.'
        else 'Service ' || coalesce(s.name, s.id) || ' exposes no NodePort.'
    end as reason,
    to_json(struct_pack(nodeports := coalesce(p.nodeports, []))) as evidence
from services s
left join exposed p on p.snapshot_id = s.snapshot_id and p.service_id = s.id
