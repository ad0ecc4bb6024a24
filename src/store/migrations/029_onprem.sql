-- On-premises licensing (issue 15, src/onprem/README.md): access inquiries, terms acceptances, orders paid through
-- Toss Payments, signed licenses (trial or paid) and published release bundles.

-- An owner (a personal account or an organization) asks for access; the operator approves or rejects.
CREATE TABLE onprem_access_requests (
  id uuid PRIMARY KEY,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org')),
  owner_id uuid NOT NULL,
  -- the member who asked (and the e-mail address they had then, for the operator's list)
  account_id uuid NOT NULL REFERENCES accounts (id),
  requester_email text NOT NULL,
  company text NOT NULL,
  contact text NOT NULL,
  message text NOT NULL DEFAULT '',
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
  -- the operator's note: optional on approval, required on rejection (shown to the caller)
  note text,
  decided_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'pending') = (decided_at IS NULL))
);
-- one open inquiry per owner at a time
CREATE UNIQUE INDEX onprem_access_one_pending ON onprem_access_requests (owner_kind, owner_id) WHERE status = 'pending';
CREATE INDEX onprem_access_owner ON onprem_access_requests (owner_kind, owner_id, created_at DESC);
CREATE INDEX onprem_access_status ON onprem_access_requests (status, created_at);

-- Terms are accepted by a person (the caller), per version; a new version needs a new acceptance.
CREATE TABLE onprem_terms_acceptances (
  account_id uuid NOT NULL REFERENCES accounts (id),
  version text NOT NULL,
  accepted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, version)
);

CREATE TABLE onprem_orders (
  id uuid PRIMARY KEY,
  -- the orderId the Toss payment window runs with
  order_id text NOT NULL UNIQUE,
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  customer text NOT NULL,
  hosts integer NOT NULL CHECK (hosts > 0),
  months integer NOT NULL CHECK (months > 0),
  -- computed by the server: hosts x months x price per host and month
  amount_krw bigint NOT NULL CHECK (amount_krw > 0),
  order_name text NOT NULL,
  renew_of uuid,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'paid')),
  payment_key text,
  -- the last refused attempt (declined card, wrong amount at Toss); the order stays pending and may be retried
  failure_code text,
  failure_message text,
  ledger_transaction_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  paid_at timestamptz,
  CHECK ((status = 'paid') = (paid_at IS NOT NULL AND payment_key IS NOT NULL))
);
CREATE INDEX onprem_orders_owner ON onprem_orders (owner_kind, owner_id, created_at DESC);

CREATE TABLE onprem_licenses (
  id uuid PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('trial', 'paid')),
  owner_kind text NOT NULL CHECK (owner_kind IN ('account', 'org')),
  owner_id uuid NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts (id),
  -- a paid license comes from exactly one order, and an order issues at most one license
  order_id uuid UNIQUE REFERENCES onprem_orders (id),
  renews uuid REFERENCES onprem_licenses (id),
  customer text NOT NULL,
  hosts integer NOT NULL CHECK (hosts > 0),
  not_before timestamptz NOT NULL,
  not_after timestamptz NOT NULL,
  features text[] NOT NULL,
  issued_at timestamptz NOT NULL,
  key_id text NOT NULL,
  -- the signed license file exactly as issued ({license, signature, key_id}); served byte for byte
  file text NOT NULL,
  CHECK (not_after > not_before),
  CHECK ((kind = 'paid') = (order_id IS NOT NULL))
);
-- one trial per owner, ever (also after it expired)
CREATE UNIQUE INDEX onprem_one_trial ON onprem_licenses (owner_kind, owner_id) WHERE kind = 'trial';
CREATE INDEX onprem_licenses_owner ON onprem_licenses (owner_kind, owner_id, issued_at DESC);
ALTER TABLE onprem_orders ADD FOREIGN KEY (renew_of) REFERENCES onprem_licenses (id);

-- Bundles the operator published; the bytes live in the releases directory under the release id.
CREATE TABLE onprem_releases (
  id uuid PRIMARY KEY,
  version text NOT NULL,
  architecture text NOT NULL,
  size bigint NOT NULL CHECK (size > 0),
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  filename text NOT NULL,
  published_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (version, architecture)
);
CREATE INDEX onprem_releases_latest ON onprem_releases (architecture, published_at DESC);
