-- Accounts, tokens, audit, idempotency, CLI error reports, fleet patch reports.

CREATE TABLE accounts (
  id uuid PRIMARY KEY,
  email text NOT NULL,
  password_hash text,
  display_name text,
  locale text NOT NULL DEFAULT 'en' CHECK (locale IN ('ko', 'en')),
  account_spend_cap_krw bigint CHECK (account_spend_cap_krw > 0),
  app_spend_cap_krw bigint CHECK (app_spend_cap_krw > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
-- a deleted account frees its e-mail for a new sign-up
CREATE UNIQUE INDEX accounts_email_live ON accounts (email) WHERE deleted_at IS NULL;

CREATE TABLE tokens (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  kind text NOT NULL CHECK (kind IN ('full', 'scoped')),
  name text NOT NULL,
  secret_hash bytea NOT NULL UNIQUE,
  display_prefix text NOT NULL,
  scopes text[] NOT NULL DEFAULT '{}',
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tokens_account ON tokens (account_id, kind);

CREATE TABLE audit_log (
  id bigserial PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  token_id uuid,
  token_kind text,
  action text NOT NULL,
  target text,
  ip text,
  status integer NOT NULL,
  request_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_account ON audit_log (account_id, id DESC);

CREATE TABLE idempotency_keys (
  owner text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  state text NOT NULL CHECK (state IN ('running', 'done')),
  locked_until timestamptz NOT NULL,
  response_status integer,
  response_headers jsonb,
  response_body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE cli_error_reports (
  id bigserial PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id),
  token_id uuid,
  report jsonb NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cli_error_reports_account ON cli_error_reports (account_id, received_at);

CREATE TABLE fleet_patch_reports (
  id bigserial PRIMARY KEY,
  host text NOT NULL,
  report jsonb NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);
