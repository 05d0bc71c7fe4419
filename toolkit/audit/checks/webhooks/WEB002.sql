-- id: WEB002
-- title: Webhook URL carries credentials
-- severity: high
-- area: webhooks
-- risk: A password or token in the URL (userinfo, a path segment or a query value) is readable by everyone who can list webhooks and ends up in proxy and server logs.
-- remediation: Rotate the exposed credential and authenticate the webhook with a signature or a header instead of the URL.
-- history: snapshot
select
    snapshot_id, 'webhook' as resource_type, id as resource_id,
    coalesce(url_host, id) as resource_name, team_id, project_id,
    null::varchar as environment_id, null::varchar as service_id,
    case when has_credentials_in_url then 'alarm' else 'ok' end as status,
    case when has_credentials_in_url
        then 'Webhook to ' || coalesce(url_host, 'an unparsed URL')
            || ' carried a credential in its URL (userinfo, a token in the path or a credential-named'
            || ' query value; removed before storing).'
        else 'Webhook to ' || coalesce(url_host, 'an unparsed URL') || ' has no credential in its URL.'
    end as reason,
    -- the stored url's path is left out: stores older than path masking may hold a token there
    to_json(struct_pack(origin := url_scheme || '://'
        || if(url_host like '%:%', '[' || url_host || ']', url_host) || coalesce(':' || url_port, ''),
        url_host, url_port, type, events)) as evidence
from webhooks
where has_credentials_in_url is not null
