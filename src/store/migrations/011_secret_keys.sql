-- Platform keys that sealed secrets in this store (src/kernel/secrets.ts): every host must hold one of them.
CREATE TABLE secret_keys (
  kid text PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now()
);
