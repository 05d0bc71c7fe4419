-- id: WEB003
-- title: Webhook targets a private or loopback address, or a name only a private network resolves
-- severity: medium
-- area: webhooks
-- risk: The platform calls into its own or a private network on every event (server-side request forgery), or the hook silently goes nowhere.
-- remediation: Point the webhook at a public endpoint meant to receive it, or remove it.
-- history: snapshot
with judged as (
    select *,
        case
            -- a connection to 0.0.0.0 or :: reaches the host itself
            when host in ('localhost', '::', '0:0:0:0:0:0:0:0') or host like '%.localhost'
                or regexp_matches(host, '^(0{1,4}:){7}0{0,3}1$|^::1$') or ip // 16777216 = 127
                or ip = 0
                then 'loopback'
            when ip // 16777216 = 0 then 'non-routable (0/8)'
            when ip // 16777216 = 10 then 'private (10/8)'
            when ip // 1048576 = 2753 then 'private (172.16/12)'
            when ip // 65536 = 49320 then 'private (192.168/16)'
            when ip // 65536 = 43518 then 'link-local (169.254/16)'
            when ip // 4194304 = 401 then 'shared (100.64/10)'
            when ip is null and regexp_matches(host, '^f[cd][0-9a-f]{0,2}:') then 'private (fc00::/7)'
            when ip is null and regexp_matches(host, '^fe[89ab][0-9a-f]?:') then 'link-local (fe80::/10)'
        end as address_kind,
        -- names no public DNS answers, so only a private network's resolver can: a single label
        -- (completed by search domains), .local (mDNS, RFC 6762), home.arpa (RFC 8375),
        -- .internal (reserved for private use by ICANN, 2024), the suffixes ICANN will never
        -- delegate as private networks use them (.corp, .home), and .lan and .localdomain
        case
            when ip is not null or host like '%:%' then null
            when host not like '%.%' then 'a single label'
            else '.' || nullif(regexp_extract(host,
                '\.(internal|local|localdomain|home\.arpa|corp|home|lan)$', 1), '')
        end as private_name
    from webhook_addresses
)
select
    snapshot_id, 'webhook' as resource_type, id as resource_id, url_host as resource_name,
    team_id, project_id, null::varchar as environment_id, null::varchar as service_id,
    case when address_kind is not null or private_name is not null then 'alarm' else 'ok' end
        as status,
    'Webhook host ' || url_host || coalesce(':' || url_port, '')
        || if(dotted is not null and dotted <> host, ' (' || dotted || ')', '')
        || case
            when address_kind is not null then ' is a ' || address_kind || ' address.'
            when private_name is not null then ' is a name that only a private network''s '
                || 'resolver answers (' || private_name || ').'
            else ' is not a private or loopback address.'
        end as reason,
    -- the stored url's path is left out: stores older than path masking may hold a token there
    to_json(struct_pack(origin := url_scheme || '://'
        || if(url_host like '%:%', '[' || url_host || ']', url_host) || coalesce(':' || url_port, ''),
        url_host, url_port, kind := coalesce(address_kind, 'private name (' || private_name || ')')))
        as evidence
from judged
