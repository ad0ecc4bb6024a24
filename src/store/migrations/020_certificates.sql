-- TLS certificates (src/certificates, issue 11): the ACME account per directory, one certificate per host name,
-- and the HTTP-01 challenges any edge process answers.

-- One ACME account per directory URL; its key is sealed (SecretBox, column acme_accounts.key_sealed).
CREATE TABLE acme_accounts (
  directory_url text PRIMARY KEY,
  key_sealed text NOT NULL,
  account_url text,
  email text,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- One row per host name asked for. status: pending (never issued yet), valid (a certificate is stored; a renewal
-- that failed keeps it valid and says so in last_error), failed (no certificate; retried at next_attempt_at).
-- claim/claimed_until: the issuance under way (one per host across processes); an expired claim is free again.
CREATE TABLE tls_certificates (
  host text PRIMARY KEY,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'valid', 'failed')),
  cert_pem text,
  key_sealed text,
  not_before timestamptz,
  not_after timestamptz,
  issuer text,
  directory_url text,
  last_error text,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  claim uuid,
  claimed_until timestamptz,
  issued_at timestamptz,
  requested_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((cert_pem IS NULL) = (key_sealed IS NULL)),
  CHECK (status <> 'valid' OR cert_pem IS NOT NULL)
);
CREATE INDEX tls_certificates_due ON tls_certificates (next_attempt_at) WHERE status <> 'valid';
CREATE INDEX tls_certificates_expiry ON tls_certificates (not_after) WHERE status = 'valid';

-- HTTP-01 challenges: /.well-known/acme-challenge/<token> answers key_authorization until expires_at.
CREATE TABLE acme_challenges (
  token text PRIMARY KEY,
  host text NOT NULL,
  key_authorization text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX acme_challenges_expiry ON acme_challenges (expires_at);

-- Every edge process drops its TLS context for a host on this NOTIFY (payload: the host), at commit.
CREATE FUNCTION notify_tls_certificate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('tls_certificates', OLD.host);
    RETURN OLD;
  END IF;
  PERFORM pg_notify('tls_certificates', NEW.host);
  RETURN NEW;
END $$;
CREATE TRIGGER tls_certificates_changed AFTER INSERT OR DELETE OR UPDATE OF cert_pem, key_sealed, status
  ON tls_certificates FOR EACH ROW EXECUTE FUNCTION notify_tls_certificate();
