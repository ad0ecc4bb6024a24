import pg from "pg";
import type { FastifyBaseLogger } from "fastify";
import type { Db, Queryable } from "../store/db.js";
import { hashSecret } from "./secrets.js";
import { parseScope, type Grant } from "./scopes.js";
import type { Principal } from "./principal.js";

const CHANNEL = "auth_invalidate";

export type RevocationTarget = { tokenId: string } | { accountId: string };
const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 50_000;

interface Entry {
  principal: Principal;
  loadedAt: number;
}

/**
 * Resolves bearer secrets to principals. A short in-process cache keeps the store off the hot path;
 * every revocation is broadcast with NOTIFY, so each API process drops the entry at once. While the
 * listener is down the cache is bypassed, never trusted.
 */
export class TokenResolver {
  private cache = new Map<string, Entry>();
  private listener: pg.Client | null = null;
  private listening = false;
  private closed = false;

  constructor(private db: Db, private connectionString: string, private log: FastifyBaseLogger) {}

  async start(): Promise<void> {
    await this.listen();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    await this.listener?.end().catch(() => {});
  }

  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on("error", (err) => this.onListenerLost(err));
    client.on("end", () => this.onListenerLost(new Error("connection ended")));
    client.on("notification", (msg) => this.onInvalidate(msg.payload ?? ""));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      this.listener = client;
      this.cache.clear();
      this.listening = true;
    } catch (err) {
      this.onListenerLost(err as Error);
    }
  }

  private onListenerLost(err: Error): void {
    if (!this.listening && this.listener === null && this.closed) return;
    this.listening = false;
    this.cache.clear();
    const old = this.listener;
    this.listener = null;
    old?.removeAllListeners();
    old?.end().catch(() => {});
    if (this.closed) return;
    this.log.warn({ err: err.message }, "auth invalidation listener lost; cache bypassed until it reconnects");
    setTimeout(() => void this.listen(), 1000).unref();
  }

  private onInvalidate(payload: string): void {
    const [kind, id] = payload.split(":");
    for (const [key, entry] of this.cache) {
      if ((kind === "token" && entry.principal.tokenId === id) || (kind === "account" && entry.principal.accountId === id)) {
        this.cache.delete(key);
      }
    }
  }

  /**
   * Tells every API process to forget a token (or all of an account's). Call inside the revoking
   * transaction: NOTIFY is delivered on commit. This process forgets at once as well, so the
   * caller's next request is already refused.
   */
  async announceRevocation(q: Queryable, target: RevocationTarget): Promise<void> {
    const payload = "tokenId" in target ? `token:${target.tokenId}` : `account:${target.accountId}`;
    await q.query("SELECT pg_notify($1, $2)", [CHANNEL, payload]);
    this.onInvalidate(payload);
  }

  async resolve(secret: string): Promise<Principal | null> {
    const key = hashSecret(secret);
    const cacheKey = key.toString("base64");
    const now = Date.now();
    const hit = this.listening ? this.cache.get(cacheKey) : undefined;
    if (hit && now - hit.loadedAt < CACHE_TTL_MS) {
      if (hit.principal.expiresAt && hit.principal.expiresAt.getTime() <= now) return null;
      return hit.principal;
    }
    const principal = await loadPrincipal(this.db, key);
    if (principal && this.listening) {
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      this.cache.set(cacheKey, { principal, loadedAt: now });
    }
    return principal;
  }
}

async function loadPrincipal(db: Db, secretHash: Buffer): Promise<Principal | null> {
  const { rows } = await db.query<{ id: string; account_id: string; kind: "full" | "scoped"; scopes: string[]; expires_at: Date | null }>(
    `UPDATE tokens t SET last_used_at = now()
       FROM accounts a
      WHERE t.secret_hash = $1 AND a.id = t.account_id AND a.deleted_at IS NULL
        AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())
     RETURNING t.id, t.account_id, t.kind, t.scopes, t.expires_at`,
    [secretHash],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    accountId: row.account_id,
    tokenId: row.id,
    kind: row.kind,
    scopes: row.scopes,
    grants: row.scopes.map(parseScope).filter((g): g is Grant => g !== null),
    expiresAt: row.expires_at,
  };
}

