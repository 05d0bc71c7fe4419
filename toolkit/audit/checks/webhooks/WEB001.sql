-- id: WEB001
-- title: Webhook delivers over plain http
-- severity: high
-- area: webhooks
-- risk: Deployment events and whatever the URL carries travel unencrypted; anyone on the path can read or forge them.
-- remediation: Point the webhook at an https endpoint.
-- history: snapshot
select
    snapshot_id, 'webhook' as resource_type, id as resource_id,
    coalesce(url_host, id) as resource_name, team_id, project_id,
    null::varchar as environment_id, null::varchar as service_id,
    case when lower(url_scheme) = 'http' then 'alarm' else 'ok' end as status,
    'Webhook to ' || coalesce(url_host, 'an unparsed URL') || ' uses '
        || coalesce(lower(url_scheme), 'no known scheme')
        || case when lower(url_scheme) = 'http' then ', which is not encrypted.' else '.' end as reason,
    -- the stored url's path is left out: stores older than path masking may hold a token there
    to_json(struct_pack(origin := url_scheme || '://'
        || if(url_host like '%:%', '[' || url_host || ']', url_host) || coalesce(':' || url_port, ''),
        url_scheme, url_host, url_port, type, events)) as evidence
from webhooks
where url_scheme is not null
