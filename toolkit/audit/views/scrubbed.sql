-- Platform free text as collection now stores it (toolkit.snapshot.redaction.scrub_text), for
-- checks that quote it in a reason or evidence: stores written by older versions hold it as
-- sent. URL userinfo, Bearer and Basic credentials, credential-named `name=value`,
-- `name: value` and JSON pairs, and `--name value` flags are masked. Broader than scrub_text
-- (RE2 has no look-around): any name containing one of credential_words() counts, and any
-- Basic or Bearer value. A scalar macro: scrubbed(message).
create or replace macro scrubbed(text) as
regexp_replace(regexp_replace(regexp_replace(regexp_replace(text,
    '://[^/\s]+@', '://***@', 'g'),
    '\b(Bearer|Basic) +[A-Za-z0-9._~+/=-]{8,}', '\1 ***', 'g'),
    '((?:^|[^A-Za-z0-9_.-])[A-Za-z0-9_.-]*(?:' || credential_words() || ')[A-Za-z0-9_.-]*'
        || '["'']?[ \t]*[=:][ \t]*["'']?)[^&;,\s"''/][^&;,\s"'']*', '\1***', 'gi'),
    '((?:^|\s)--?[A-Za-z0-9_.-]*(?:' || credential_words() || ')[A-Za-z0-9_.-]*) +[^\s-]\S*',
    '\1 ***', 'gi')
