-- Whether a variable name looks like a secret's: it matches one of the comma-separated
-- regular expressions of `secrets` (case-insensitive) and none of `settings` (names of a
-- setting about a secret: its id, file, length, lifetime, the URL or header it goes to).
-- VAR004, VAR007 and VAR008 pass their secret_names and not_secret_names parameters. A
-- scalar macro: secret_name(name, $secret_names, $not_secret_names).
create or replace macro secret_name(name, secrets, settings) as
regexp_matches(name, '(?i)(' || replace(secrets, ',', '|') || ')')
    and not regexp_matches(name, '(?i)(' || replace(settings, ',', '|') || ')')
