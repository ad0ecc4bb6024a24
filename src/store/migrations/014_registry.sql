-- Image registry (src/registry): the token signing key, owners' namespaces, short-lived credentials,
-- and where the registry server runs.

-- The one key pair every API process signs registry tokens with; the registry trusts its certificate.
CREATE TABLE registry_signing_keys (
  id integer PRIMARY KEY CHECK (id = 1),
  -- PKCS#8 PEM, sealed under the platform key (src/kernel/secrets.ts)
  private_key text NOT NULL,
  -- the self-signed certificate, DER in base64: the JWT's x5c header and the registry's rootcertbundle
  certificate text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Each owner pushes and pulls under its own namespace (the first path components of a repository name).
CREATE TABLE registry_namespaces (
  owner_kind text NOT NULL,
  owner_id text NOT NULL,
  namespace text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner_kind, owner_id)
);

-- Credentials for `podman login` (purpose user) and for the runtime's pulls (purpose runtime).
CREATE TABLE registry_credentials (
  id uuid PRIMARY KEY,
  username text NOT NULL UNIQUE,
  password_hash bytea NOT NULL,
  owner_kind text NOT NULL,
  owner_id text NOT NULL,
  -- the account that asked for them (null: minted by the platform for the runtime)
  account_id uuid,
  purpose text NOT NULL CHECK (purpose IN ('user', 'runtime')),
  namespace text NOT NULL,
  -- repository names (full, with the namespace) the credentials are limited to; null: the whole namespace
  repositories text[],
  actions text[] NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX registry_credentials_expiry ON registry_credentials (expires_at);

-- The registry servers running now: one per worker host, found by API processes on any host.
CREATE TABLE registry_servers (
  host_id uuid PRIMARY KEY REFERENCES hosts (id) ON DELETE CASCADE,
  address text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now()
);
