-- Suite login and suite billing (issue 27, src/suite/README.md): the shared tables. The sign-in, directory and
-- billing parts add their own (047, 048, 049).

-- How an account signs in: 'password' (e-mail and password, the default) or 'suite' (only through the suite).
ALTER TABLE accounts ADD COLUMN sign_in text NOT NULL DEFAULT 'password' CHECK (sign_in IN ('password', 'suite'));
-- A suite identity never merges with a password account of the same e-mail: e-mails are unique among live
-- password accounts only (same index name: sign-up's email_taken check looks for it).
DROP INDEX accounts_email_live;
CREATE UNIQUE INDEX accounts_email_live ON accounts (email) WHERE deleted_at IS NULL AND sign_in = 'password';

-- The suite company an organization is linked to: one organization per company and issuer, one company per
-- organization. setup_done_at: an admin finished the setup wizard (staff sign-in is held until then).
CREATE TABLE suite_links (
  org_id uuid PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
  issuer text NOT NULL,
  company_id text NOT NULL,
  linked_by uuid NOT NULL REFERENCES accounts (id),
  -- who may join by suite login alone: all staff, staff of the chosen suite units (and their descendants), or
  -- staff an admin invited by e-mail
  join_policy text NOT NULL DEFAULT 'invite' CHECK (join_policy IN ('all', 'departments', 'invite')),
  join_units text[] NOT NULL DEFAULT '{}',
  -- pause an exhausted member's company apps and stop their databases until the allowance is back
  stop_on_exhausted boolean NOT NULL DEFAULT false,
  setup_done_at timestamptz,
  setup_done_by uuid REFERENCES accounts (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (issuer, company_id)
);

-- A suite identity: (issuer, company, subject) names one account; never the e-mail. The suite login token (sealed
-- with the platform key) lets metering and allowance lookups act for the member; expired or absent: 402
-- suite_login_required on creation.
CREATE TABLE suite_identities (
  account_id uuid PRIMARY KEY REFERENCES accounts (id),
  issuer text NOT NULL,
  company_id text NOT NULL,
  subject text NOT NULL,
  email text,
  access_token_sealed text,
  refresh_token_sealed text,
  token_expires_at timestamptz,
  last_login_at timestamptz,
  -- the suite no longer lists the member, or they left the join policy: sessions and tokens were revoked
  deprovisioned_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (issuer, company_id, subject)
);
