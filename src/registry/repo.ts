import { allRows, oneRow, oneValue, type Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";

/** Every SQL statement of the registry area (tables: migration 014_registry.sql). */

export interface SigningKeyRow {
  private_key: string;
  certificate: string;
}

export async function signingKey(q: Queryable): Promise<SigningKeyRow | null> {
  return oneRow<SigningKeyRow>(q, "SELECT private_key, certificate FROM registry_signing_keys WHERE id = 1");
}

/** Stores the key unless another process stored one first; either way answers the one that counts. */
export async function insertSigningKey(q: Queryable, row: SigningKeyRow): Promise<SigningKeyRow> {
  await q.query(
    "INSERT INTO registry_signing_keys (id, private_key, certificate) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING",
    [row.private_key, row.certificate],
  );
  return (await signingKey(q))!;
}

export async function namespaceOf(q: Queryable, owner: Owner): Promise<string | null> {
  return oneValue<string>(
    q,
    "namespace",
    "SELECT namespace FROM registry_namespaces WHERE owner_kind = $1 AND owner_id = $2",
    [owner.kind, owner.id],
  );
}

/** Claims the namespace for the owner; false when another owner holds that name. */
export async function claimNamespace(q: Queryable, owner: Owner, namespace: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO registry_namespaces (owner_kind, owner_id, namespace) VALUES ($1, $2, $3)
     ON CONFLICT DO NOTHING`,
    [owner.kind, owner.id, namespace],
  );
  return rowCount === 1;
}

export interface CredentialRow {
  id: string;
  username: string;
  password_hash: Buffer;
  owner_kind: string;
  owner_id: string;
  account_id: string | null;
  purpose: "user" | "runtime";
  namespace: string;
  repositories: string[] | null;
  actions: string[];
  expires_at: Date;
  created_at: Date;
}

export type NewCredential = Omit<CredentialRow, "created_at">;

export async function insertCredential(q: Queryable, c: NewCredential): Promise<void> {
  await q.query(
    `INSERT INTO registry_credentials
       (id, username, password_hash, owner_kind, owner_id, account_id, purpose, namespace, repositories, actions, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      c.id,
      c.username,
      c.password_hash,
      c.owner_kind,
      c.owner_id,
      c.account_id,
      c.purpose,
      c.namespace,
      c.repositories,
      c.actions,
      c.expires_at,
    ],
  );
}

/** Credentials by user name, expired or not (the caller checks `expires_at`). */
export async function credential(q: Queryable, username: string): Promise<CredentialRow | null> {
  return oneRow<CredentialRow>(q, "SELECT * FROM registry_credentials WHERE username = $1", [username]);
}

/** Drops credentials expired for a while (kept an hour so a late login still reads as expired, not unknown). */
export async function pruneCredentials(q: Queryable): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM registry_credentials WHERE id IN (
       SELECT id FROM registry_credentials WHERE expires_at < now() - interval '1 hour' LIMIT 1000)`,
  );
  return rowCount ?? 0;
}

export async function recordServer(q: Queryable, hostId: string, address: string): Promise<void> {
  await q.query(
    `INSERT INTO registry_servers (host_id, address) VALUES ($1, $2)
     ON CONFLICT (host_id) DO UPDATE SET address = EXCLUDED.address, started_at = now()`,
    [hostId, address],
  );
}

export async function forgetServer(q: Queryable, hostId: string): Promise<void> {
  await q.query("DELETE FROM registry_servers WHERE host_id = $1", [hostId]);
}

/** Recorded registry servers, newest first. */
export async function servers(q: Queryable): Promise<{ host_id: string; address: string }[]> {
  return allRows<{ host_id: string; address: string }>(
    q,
    "SELECT host_id, address FROM registry_servers ORDER BY started_at DESC",
  );
}
