-- Platform free text as collection now stores it (toolkit.snapshot.text_scrub.scrub_text),
-- for checks that quote it in a reason or evidence: stores written by older versions hold it
-- as sent. URL userinfo, Authorization headers, Bearer and Basic credentials,
-- credential-named `name=value`, `name: value` and JSON pairs, `--name value` flags, and the
-- password arguments of mysql, sshpass, redis-cli, registry logins, sqlcmd and curl are
-- masked. Broader than scrub_text (RE2 has no look-around): any name containing one of
-- credential_words() counts, and any Basic or Bearer value. A scalar macro: scrubbed(message).
create or replace macro scrubbed(text) as
regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
    regexp_replace(text,
    '://[^/\s]+@', '://***@', 'g'),
    '((?i:proxy-)?(?i:authorization)["'']?[ \t]*[:=][ \t]*["'']?)[^\s"'',;]+(?: +[^\s"'',;]+)?',
        '\1***', 'g'),
    '((?:^|[^\w-])(?:(?:sshpass|(?:docker|podman|buildah|skopeo|helm(?:[ \t]+registry)?)'
        || '[ \t]+login)\b(?:[ \t]+[^\s;|&]+)*?[ \t]+-p[ \t]*|redis-cli\b(?:[ \t]+[^\s;|&]+)*?'
        || '[ \t]+-a[ \t]*|(?:sqlcmd|bcp|osql)\b(?:[ \t]+[^\s;|&]+)*?[ \t]+-P[ \t]*|'
        || '(?:mysql\w*|mariadb[\w-]*)\b(?:[ \t]+[^\s;|&]+)*?[ \t]+-p))[^\s;|&-][^\s;|&]*',
        '\1***', 'g'),
    '((?:^|[^\w-])curl\b(?:[ \t]+[^\s;|&]+)*?[ \t]+(?:-u[ \t]*|--user(?:[ \t]+|=))["'']?'
        || '[^\s:"'']*:)[^\s"'']+', '\1***', 'g'),
    '\b(Bearer|Basic) +[A-Za-z0-9._~+/=-]{8,}', '\1 ***', 'g'),
    '((?:^|[^A-Za-z0-9_.-])[A-Za-z0-9_.-]*(?:' || credential_words() || ')[A-Za-z0-9_.-]*'
        || '["'']?[ \t]*[=:][ \t]*["'']?)[^&;,\s"''/][^&;,\s"'']*', '\1***', 'gi'),
    '((?:^|\s)--?[A-Za-z0-9_.-]*(?:' || credential_words() || ')[A-Za-z0-9_.-]*) +'
        || '(?:"[^"]*"|''[^'']*''|[^\s-]\S*)',
    '\1 ***', 'gi')
