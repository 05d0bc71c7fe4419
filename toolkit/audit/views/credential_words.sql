-- The words that make a name a credential's when read broadly, as the SQL over older stores
-- reads them: any name containing one (client_credential, x-api-key, db.password, jwt_secret).
-- The same words as toolkit.snapshot.secret_names.CREDENTIAL_WORDS reduced to their stems (pass
-- covers password and passphrase, key covers apikey and privatekey, sig covers signature,
-- auth covers authorization), and a stem in each of its SECRET_NAMES, for scrubbed() and
-- WEB002. A scalar macro, as a regular
-- expression alternation: '(?:' || credential_words() || ')'.
create or replace macro credential_words() as 'pass|pwd|token|secret|key|sig|auth|credential|jwt|hmac';
