-- id: WEB002
-- title: Webhook URL carries credentials
-- severity: high
-- area: webhooks
-- risk: A password or token in the URL (userinfo, a path segment or parameter, or a query value) is readable by everyone who can list webhooks and ends up in proxy and server logs.
-- remediation: Rotate the exposed credential and authenticate the webhook with a signature or a header instead of the URL.
-- history: snapshot
with judged as (
    select *,
        -- stores written before path parameters were masked hold ";name=value" as sent: a
        -- credential-named one (names read broadly, as scrubbed() reads them) or a bare token
        coalesce(list_bool_or(list_transform(
            regexp_extract_all(regexp_extract(url, '^[^?#]*'), ';[^;/]*'),
            lambda p: if(p like '%=%',
                regexp_matches(p, '^;([^=]*(' || credential_words() || ')[^=]*|code)=', 'i')
                    and substr(p, instr(p, '=') + 1) not in ('', '***'),
                regexp_full_match(p, ';[A-Za-z0-9._~:@+%-]{16,}')
                    and not regexp_full_match(p, ';[a-z]+([._-][a-z]+)*')))), false) as stored_parameter,
        -- a URL the collector could not parse is stored as *** with has_credentials_in_url
        -- null (older stores kept nothing of it, and said false): not known to be clean
        case when has_credentials_in_url or stored_parameter then 'alarm'
            when has_credentials_in_url is null or url is null then 'unknown'
            else 'ok' end as status
    from webhooks
    where has_credentials_in_url is not null or url is not null
)
select
    snapshot_id, 'webhook' as resource_type, id as resource_id,
    coalesce(url_host, id) as resource_name, team_id, project_id,
    null::varchar as environment_id, null::varchar as service_id, status,
    case when has_credentials_in_url
        then 'Webhook to ' || coalesce(url_host, 'an unparsed URL')
            || ' carried a credential in its URL (userinfo, a token in the path or a credential-named'
            || ' query value or path parameter; removed before storing).'
        when stored_parameter then 'Webhook to ' || url_host || ' carries a credential in a path'
            || ' parameter (;name=value) of its URL, which this store holds as sent: it was written'
            || ' before path parameters were masked.'
        when status = 'unknown' then 'Webhook ' || id || ' has a URL the collector could not parse'
            || ' (a port out of range, a broken IPv6 literal, no scheme or host): it was not stored,'
            || ' and whether it carries a credential is unknown.'
        else 'Webhook to ' || coalesce(url_host, 'an unparsed URL') || ' has no credential in its URL.'
    end as reason,
    -- the stored url's path is left out: stores older than path masking may hold a token there
    to_json(struct_pack(origin := url_scheme || '://'
        || if(url_host like '%:%', '[' || url_host || ']', url_host) || coalesce(':' || url_port, ''),
        url_host, url_port, type, events)) as evidence
from judged
