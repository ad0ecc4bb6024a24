import pg from "pg";
import { ADMIN_ROLE } from "./record.js";

export interface AdminTarget {
  socketDir: string;
  port: number;
  password: string;
  database?: string;
}

/**
 * The platform's own superuser session, over the instance's private Unix socket (no TLS, no
 * allowlist). It overrides read-only mode so the platform can still manage an instance that is
 * over its storage quota.
 */
export async function adminClient(t: AdminTarget): Promise<pg.Client> {
  const client = new pg.Client({
    host: t.socketDir,
    port: t.port,
    user: ADMIN_ROLE,
    password: t.password,
    database: t.database ?? "postgres",
    options: "-c default_transaction_read_only=off -c statement_timeout=0",
    connectionTimeoutMillis: 15_000,
    application_name: "platform",
  });
  await client.connect();
  // a terminated or failing session must not crash the process
  client.on("error", () => {});
  return client;
}

export async function withAdmin<T>(t: AdminTarget, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = await adminClient(t);
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
