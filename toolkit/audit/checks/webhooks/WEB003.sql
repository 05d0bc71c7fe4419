-- id: WEB003
-- title: Webhook targets a private or loopback address
-- severity: medium
-- area: webhooks
-- risk: The platform calls into its own or a private network on every event (server-side request forgery), or the hook silently goes nowhere.
-- remediation: Point the webhook at a public endpoint meant to receive it, or remove it.
-- history: snapshot
with hosts as (
    select *, lower(trim(url_host, '[]')) as host from webhooks where url_host is not null
),
judged as (
    select *,
        case
            when host in ('localhost', '::1', '0.0.0.0', '::') or host like '%.localhost'
                then 'loopback'
            when regexp_matches(host, '^127\.\d+\.\d+\.\d+$') then 'loopback'
            when regexp_matches(host, '^10\.\d+\.\d+\.\d+$') then 'private (10/8)'
            when regexp_matches(host, '^172\.(1[6-9]|2\d|3[01])\.\d+\.\d+$') then 'private (172.16/12)'
            when regexp_matches(host, '^192\.168\.\d+\.\d+$') then 'private (192.168/16)'
            when regexp_matches(host, '^169\.254\.\d+\.\d+$') then 'link-local (169.254/16)'
            when regexp_matches(host, '^f[cd][0-9a-f]{0,2}:') then 'private (fc00::/7)'
            when regexp_matches(host, '^fe[89ab][0-9a-f]?:') then 'link-local (fe80::/10)'
        end as kind
    from hosts
)
select
    snapshot_id, 'webhook' as resource_type, id as resource_id, url_host as resource_name,
    team_id, project_id, null::varchar as environment_id, null::varchar as service_id,
    case when kind is not null then 'alarm' else 'ok' end as status,
    'Webhook host ' || url_host || coalesce(':' || url_port, '')
        || coalesce(' is a ' || kind || ' address.', ' is not a private or loopback address.') as reason,
    to_json(struct_pack(url, url_host, url_port, kind)) as evidence
from judged
