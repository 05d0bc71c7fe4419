-- Webhooks that have a host, with the host in one spelling (lower case, no brackets or trailing
-- dot) and the address it reaches with no lookup, read as toolkit/collect/webhook_address.py
-- reads it at collection (WEB003 judges the rows of older stores on these columns):
-- * host: full-width forms read as IDNA maps them (the collector applies NFKC; DuckDB has no
--   NFKC, so the full-width digits, letters, ".-:%[]" and the ideographic full stops are
--   translated: "１２７．０．０．１" and "127。0。0。1" are 127.0.0.1; rarer compatibility
--   characters, such as circled digits, only the collector maps);
-- * ip: an IPv4 address as a number, in any form resolvers accept (inet_aton: 1 to 4 parts,
--   each decimal, octal 0... or hex 0x..., with any number of leading zeros): "0x7f000001",
--   "2130706433", "0177.0.0.1", "0x00000007f.0.0.1" and "127.1" are all 127.0.0.1; or the one
--   an IPv6 address carries: mapped (::ffff:0:0/96),
--   compatible (::/96 but :: and ::1), NAT64 (64:ff9b::/96) or 6to4 (2002::/16);
-- * ipv6: any other IPv6 address as its 8 groups, however it is spelled (0::1, ::0001,
--   0:0:0:0:0:0:0:1, fe80::1%eth0); text ipaddress refuses (1::2::3, 12345::1) has none;
-- * address: that address as ipaddress prints it (127.0.0.1, fe80::1); null for a name.
-- Names public DNS answers with a fixed or an embedded address stand for it: lvh.me and
-- localtest.me (and their subdomains) are 127.0.0.1, and the wildcard services nip.io and
-- sslip.io answer a.b.c.d.nip.io, app-a-b-c-d.sslip.io and app-7f000001.nip.io (hex) with the
-- address they spell.
create or replace view webhook_addresses as
with hosts as (  -- a trailing dot names the same host
    select *, rtrim(lower(trim(translate(url_host,
            '０１２３４５６７８９ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺ．。｡－：％［］',
            '0123456789abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz...-:%[]'), '[]')), '.') as host
    from webhooks where url_host is not null
),
named as (  -- the address a name stands for, else the host itself
    select *, nullif(regexp_extract(host,
            '(^|[.-])(([0-9]{1,3}[.-]){3}[0-9]{1,3}|[0-9a-f]{8})\.(nip|sslip)\.io$', 2), '') as label,
        case
            when regexp_matches(host, '(^|\.)(lvh|localtest)\.me$') then '127.0.0.1'
            when regexp_full_match(label, '[0-9a-f]{8}') then '0x' || label  -- one hex number
            when label is not null then replace(label, '-', '.')  -- parts read as inet_aton does
            else host
        end as literal
    from hosts
),
literals as (
    -- past the inet_aton forms, ipaddress reads what comes before a zone id (fe80::1%eth0), and
    -- IPv4 there only as a dotted quad without leading zeros: alone or as IPv6's last 32 bits
    select *, split_part(literal, '%', 1) as bare,
        nullif(regexp_extract(bare,
            '(^|:)(((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9]))$',
            2), '') as quad,
        list_transform(string_split(quad, '.'), lambda o: o::integer) as octets
    from named
),
parts as (  -- the numbers of an IPv4 address, if the host is one (or names one)
    select *,
        case when regexp_full_match(literal,
                '(0x[0-9a-f]+|0[0-7]*|[1-9][0-9]{0,9})(\.(0x[0-9a-f]+|0[0-7]*|[1-9][0-9]{0,9})){0,3}')
                or quad = bare  -- a dotted quad with a zone id (127.0.0.1%eth0)
            then list_transform(string_split(bare, '.'),
                -- hex and octal without their leading zeros; more digits than 32 bits take
                -- is 2^32, which every range check below refuses
                lambda p: case
                    when p like '0x%' then if(length(ltrim(substr(p, 3), '0')) > 8, 4294967296::ubigint,
                        ('0x0' || ltrim(substr(p, 3), '0'))::ubigint)
                    when p like '0_%' then if(length(ltrim(p, '0')) > 11, 4294967296::ubigint,
                        list_reduce(list_transform(string_split('0' || ltrim(p, '0'), ''),
                            lambda d: d::ubigint), lambda a, d: a * 8 + d))
                    else p::ubigint end)
        end as v,
        -- an IPv6 literal, its IPv4 tail as two groups: ::ffff:10.0.0.1 is ::ffff:a00:1
        case when bare like '%:%' then coalesce(left(bare, length(bare) - length(quad))
            || printf('%x:%x', octets[1] * 256 + octets[2], octets[3] * 256 + octets[4]), bare)
        end as v6_text,
        len(regexp_extract_all(v6_text, '[0-9a-f]+')) as v6_written  -- groups not left out
    from literals
),
-- groups and addresses are materialized: each reads the one before many times, and a query
-- aggregating the address (group by address) otherwise had DuckDB inline every stage into each
-- use, growing the work per row with each stage (105,930 webhooks: minutes, not 0.1 s)
groups as materialized (  -- the 8 groups of a valid IPv6 literal; "::" stands for the zero
    -- groups left out
    select *, case
        when regexp_full_match(v6_text, '[0-9a-f]{1,4}(:[0-9a-f]{1,4}){7}')
            or (v6_written < 8 and regexp_full_match(v6_text,
                '([0-9a-f]{1,4}(:[0-9a-f]{1,4}){0,6})?::([0-9a-f]{1,4}(:[0-9a-f]{1,4}){0,6})?'))
            then list_transform(
                string_split(trim(replace(v6_text, '::', ':' || repeat('0:', 8 - v6_written)), ':'), ':'),
                lambda h: ('0x' || h)::ubigint)
    end as g
    from parts
),
addresses as materialized (
    select *, case
        when len(v) = 1 and v[1] < 4294967296 then v[1]
        when len(v) = 2 and v[1] < 256 and v[2] < 16777216 then v[1] * 16777216 + v[2]
        when len(v) = 3 and list_max(v[1:2]) < 256 and v[3] < 65536
            then v[1] * 16777216 + v[2] * 65536 + v[3]
        when len(v) = 4 and list_max(v) < 256
            then v[1] * 16777216 + v[2] * 65536 + v[3] * 256 + v[4]
        -- an IPv6 address's last 32 bits if it is IPv4-mapped, NAT64 (64:ff9b is 100, 65435)
        -- or compatible, but for :: and ::1 (ipaddress reads those as IPv6)
        when g[1:6] in ([0, 0, 0, 0, 0, 65535], [100, 65435, 0, 0, 0, 0])
            or (g[1:6] = [0, 0, 0, 0, 0, 0] and g[7] * 65536 + g[8] > 1)
            then g[7] * 65536 + g[8]
        when g[1] = 8194 then g[2] * 65536 + g[3]  -- 6to4 (2002::/16), its groups 2 and 3
    end as ip
    from groups
),
printed as (
    -- ipaddress prints groups without leading zeros, the first longest run of two or more
    -- zero groups as "::"; ":1:0:0:2:" framed in colons, the run is the first ":0:0" + ":"
    select *, if(ip is null, g, null) as ipv6,
        ':' || array_to_string(list_transform(ipv6, lambda h: printf('%x', h)), ':') || ':' as framed,
        list_max(list_transform(regexp_extract_all(framed, '(:0)+'), lambda r: length(r))) as run,
        instr(framed, repeat(':0', run // 2) || ':') as run_at
    from addresses
)
select * exclude (label, literal, bare, quad, octets, v, v6_text, v6_written, g, framed, run, run_at),
    (ip // 16777216) || '.' || (ip // 65536 % 256) || '.' || (ip // 256 % 256) || '.' || (ip % 256)
        as dotted,
    coalesce(dotted, regexp_replace(regexp_replace(
        if(run >= 4, left(framed, run_at - 1) || '::' || substr(framed, run_at + run + 1), framed),
        '^:([^:])', '\1'), '([^:]):$', '\1')) as address
from printed
