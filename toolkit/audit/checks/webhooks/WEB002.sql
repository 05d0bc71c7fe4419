-- id: WEB002
-- title: Webhook URL carries credentials
-- severity: high
-- area: webhooks
-- risk: A password or token in the URL (userinfo or a query value) is readable by everyone who can list webhooks and ends up in proxy and server logs.
-- remediation: Rotate the exposed credential and authenticate the webhook with a signature or a header instead of the URL.
-- history: snapshot
select
    snapshot_id, 'webhook' as resource_type, id as resource_id,
    coalesce(url_host, url, id) as resource_name, team_id, project_id,
    null::varchar as environment_id, null::varchar as service_id,
    case when has_credentials_in_url then 'alarm' else 'ok' end as status,
    case when has_credentials_in_url
        then 'Webhook to ' || coalesce(url_host, 'an unparsed URL')
            || ' carried a credential in its URL (removed before storing: ' || coalesce(url, 'no URL kept') || ').'
        else 'Webhook to ' || coalesce(url_host, 'an unparsed URL') || ' has no credential in its URL.'
    end as reason,
    to_json(struct_pack(url, url_host, type, events)) as evidence
from webhooks
where has_credentials_in_url is not null
