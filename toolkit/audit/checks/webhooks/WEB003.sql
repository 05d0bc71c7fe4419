-- id: WEB003
-- title: Webhook targets a private or loopback address, or a name only a private network resolves
-- severity: medium
-- area: webhooks
-- risk: The platform calls into its own or a private network on every event (server-side request forgery), or the hook silently goes nowhere.
-- remediation: Point the webhook at a public endpoint meant to receive it, or remove it.
-- history: snapshot
with judged as (
    -- url_address_kind is judged at collection (toolkit/collect/webhook_address.py, ipaddress);
    -- rows of older stores lack it and are judged here alike (same kinds, same order), on the
    -- address webhook_addresses reads as ipaddress does; a collected 'public' is judged again
    -- there, as older collectors read zero-padded and full-width spellings of 127.0.0.1 as public
    select * exclude (address), coalesce(nullif(url_address_kind, 'public'), case
            when ip = 0 then 'unspecified (0.0.0.0, which reaches the host itself)'
            when ip // 16777216 = 0 then 'non-routable (0/8)'
            when ip // 16777216 = 127 then 'loopback (127/8)'
            when ip // 16777216 = 10 then 'private (10/8)'
            when ip // 1048576 = 2753 then 'private (172.16/12)'
            when ip // 65536 = 49320 then 'private (192.168/16)'
            when ip // 4194304 = 401 then 'shared (100.64/10)'
            when ip // 65536 = 43518 then 'link-local (169.254/16)'
            when ip // 131072 = 25353 then 'benchmarking (198.18/15)'
            when ip // 268435456 = 14 then 'multicast (224/4)'
            when ip = 4294967295 then 'broadcast (255.255.255.255)'
            when ip // 268435456 = 15 then 'reserved (240/4)'
            when ipv6 = [0, 0, 0, 0, 0, 0, 0, 1] then 'loopback (::1)'
            when ipv6 = [0, 0, 0, 0, 0, 0, 0, 0] then 'unspecified (::, which reaches the host itself)'
            -- the first group's top 7, 10 or 8 bits: fc00::/7, fe80::/10, fec0::/10, ff00::/8
            when ipv6[1] // 512 = 126 then 'private (fc00::/7)'
            when ipv6[1] // 64 = 1018 then 'link-local (fe80::/10)'
            when ipv6[1] // 64 = 1019 then 'site-local (fec0::/10)'
            when ipv6[1] // 256 = 255 then 'multicast (ff00::/8)'
            when ip is not null or ipv6 is not null then 'public'
            when host = 'localhost' or host like '%.localhost' then 'loopback (localhost)'
            -- names no public DNS answers (see webhook_address.py for the list and why)
            when host not like '%.%' then 'private name (a single label)'
            else coalesce('private name (.' || nullif(regexp_extract(host,
                '\.(svc\.cluster\.local|cluster\.local|home\.arpa|localdomain|internal|local|svc|corp|home|lan)$',
                1), '') || ')', 'public')
        end) as kind,
        coalesce(url_address, address) as address
    from webhook_addresses
)
select
    snapshot_id, 'webhook' as resource_type, id as resource_id, url_host as resource_name,
    team_id, project_id, null::varchar as environment_id, null::varchar as service_id,
    case when kind <> 'public' then 'alarm' else 'ok' end as status,
    concat('Webhook host ', url_host, ':' || url_port,
        if(address <> host, ' (' || address || ')', ''),
        case when kind = 'public' then ' is not a private or loopback address.'
            when kind like 'private name%' then ' is a ' || kind
                || ', which only a private network''s resolver answers.'
            else ' is a ' || kind || ' address.'
        end) as reason,
    -- the stored url's path is left out: stores older than path masking may hold a token there
    to_json(struct_pack(origin := url_scheme || '://'
        || if(url_host like '%:%', '[' || url_host || ']', url_host) || coalesce(':' || url_port, ''),
        url_host, url_port, address, kind)) as evidence
from judged
