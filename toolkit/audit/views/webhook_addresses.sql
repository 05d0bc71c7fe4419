-- Webhooks that have a host, with the host in one spelling (lower case, no brackets or trailing dot) and,
-- when that host is an IPv4 address in any form resolvers accept (inet_aton: 1 to 4 parts,
-- each decimal, octal 0... or hex 0x...; bare or IPv4-mapped as ::ffff:a.b.c.d or
-- ::ffff:hhhh:hhhh), the address as a number (ip) and in dotted form. "0x7f000001",
-- "2130706433", "0177.0.0.1", "127.1" and "::ffff:7f00:1" are all 127.0.0.1.
-- So are names public DNS answers with a fixed or an embedded address, with no lookup:
-- lvh.me and localtest.me (and their subdomains) are 127.0.0.1, and the wildcard services
-- nip.io and sslip.io answer a.b.c.d.nip.io, app-a-b-c-d.sslip.io and the like with a.b.c.d.
create or replace view webhook_addresses as
with hosts as (  -- a trailing dot names the same host
    select *, rtrim(lower(trim(url_host, '[]')), '.') as host from webhooks where url_host is not null
),
named as (  -- the address a name stands for, where public DNS answers it without a lookup
    select *, coalesce(
        case when regexp_matches(host, '(^|\.)(lvh|localtest)\.me$') then '127.0.0.1' end,
        replace(nullif(regexp_extract(host,
            '(^|[.-])(((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])[.-]){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9]))\.(nip|sslip)\.io$',
            2), ''), '-', '.'),
        host) as address
    from hosts
),
parts as (  -- the numbers of an IPv4 address, if the host is one (or names one)
    select *,
        case when regexp_matches(address, '^::ffff:[0-9a-f]{1,4}:[0-9a-f]{1,4}$')
            then list_transform(string_split(regexp_replace(address, '^::ffff:', ''), ':'),
                lambda h: ('0x' || h)::ubigint)
        when regexp_matches(address,
            '^(::ffff:)?(0x[0-9a-f]{1,8}|0[0-7]{0,11}|[1-9][0-9]{0,9})(\.(0x[0-9a-f]{1,8}|0[0-7]{0,11}|[1-9][0-9]{0,9})){0,3}$')
            then list_transform(string_split(regexp_replace(address, '^::ffff:', ''), '.'),
                lambda p: case when p like '0x%' then p::ubigint
                    when p like '0_%' then list_reduce(list_transform(string_split(p, ''),
                        lambda d: d::ubigint), lambda a, d: a * 8 + d)
                    else p::ubigint end)
        end as v
    from named
),
addresses as (
    select *, case
        when len(v) = 1 and v[1] < 4294967296 then v[1]
        when address like '::ffff:%:%' and len(v) = 2 and list_max(v) < 65536 then v[1] * 65536 + v[2]
        when len(v) = 2 and v[1] < 256 and v[2] < 16777216 then v[1] * 16777216 + v[2]
        when len(v) = 3 and list_max(v[1:2]) < 256 and v[3] < 65536
            then v[1] * 16777216 + v[2] * 65536 + v[3]
        when len(v) = 4 and list_max(v) < 256
            then v[1] * 16777216 + v[2] * 65536 + v[3] * 256 + v[4]
    end as ip from parts
)
select * exclude (v, address),
    (ip // 16777216) || '.' || (ip // 65536 % 256) || '.' || (ip // 256 % 256) || '.' || (ip % 256)
        as dotted
from addresses
