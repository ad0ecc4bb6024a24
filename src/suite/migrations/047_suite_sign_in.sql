-- Suite sign-in (src/suite/README.md, "Sign-in"): what a sign-in in progress needs, kept in the store so any API
-- process finishes it, the one-time login codes a finished sign-in hands the browser or the CLI, and the owner's
-- break-glass recovery code.

-- A started sign-in, keyed by its OAuth state (single use, 10 minutes): the nonce and PKCE verifier the callback
-- checks the suite's answer against, and where the browser goes afterwards.
CREATE TABLE suite_sign_in_states (
  state text PRIMARY KEY,
  nonce text NOT NULL,
  code_verifier text NOT NULL,
  return_to text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX suite_sign_in_states_created ON suite_sign_in_states (created_at);

-- A finished sign-in's one-time code (SHA-256 of it; 2 minutes, single use): exchanged for a session, so the
-- session itself never rides a URL.
CREATE TABLE suite_login_codes (
  code_hash bytea PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX suite_login_codes_expires ON suite_login_codes (expires_at);

-- The owner's way in when the suite is misconfigured: one code per organization (a new one replaces the old),
-- shown once, stored hashed, single use. The e-mail is the owner's when the code was made (the sign-in form asks
-- for it); the recovery checks the account is still the owner.
CREATE TABLE suite_recovery_codes (
  org_id uuid PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  email text NOT NULL,
  code_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  used_at timestamptz
);
