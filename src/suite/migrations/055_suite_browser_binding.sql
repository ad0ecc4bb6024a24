-- Login CSRF (src/suite/README.md, "Sign-in"): a sign-in started in a browser is bound to it by a cookie; the state
-- and then the login code keep the SHA-256 of that cookie, and the console's exchange takes a code only from the
-- browser that started it, so a code someone else got from their own sign-in cannot sign a victim in as them.
ALTER TABLE suite_sign_in_states ADD COLUMN browser_hash bytea;
ALTER TABLE suite_login_codes ADD COLUMN browser_hash bytea;
