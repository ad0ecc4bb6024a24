import type { FastifyBaseLogger } from "fastify";
import type { Db, Queryable } from "../store/db.js";
import { ReconnectingListener } from "../store/listener.js";
import { hashSecret } from "./secrets.js";
import { parseScope, type Grant } from "./scopes.js";
import type { Principal } from "./principal.js";
import { notify, principalRow, touchToken } from "./tokens-repo.js";

/** where revocations are announced (each process's resolvers LISTEN, the edge's too) */
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
  private loading = new Map<string, Promise<Principal | null>>();
  private touched = new Map<string, number>();
  /** counts revocations heard (and listener changes): a load begun before one is answered but not kept */
  private epoch = 0;
  private readonly listener: ReconnectingListener;

  constructor(
    private db: Db,
    connectionString: string,
    log: FastifyBaseLogger,
    /**
     * after every revocation heard and whenever the listener is lost or back: whoever keeps decisions made from resolved
     * principals (the edge, and nginx's admissions through it) drops them here, on this listener's own connection,
     * so nothing is decided again from a principal this cache still holds
     */
    private readonly onRevoked?: () => void,
  ) {
    this.listener = new ReconnectingListener({
      connectionString,
      channels: [CHANNEL],
      log,
      lostMessage: "auth invalidation listener lost; cache bypassed until it reconnects",
      onNotification: (_channel, payload) => {
        this.onInvalidate(payload);
        this.onRevoked?.();
      },
      // lost or back: revocations may have been missed meanwhile, so everything resolved before goes
      onLive: () => this.forgetAll(),
      onLost: () => this.forgetAll(),
    });
  }

  /** the cache is trusted only while revocations are heard */
  get listening(): boolean {
    return this.listener.live;
  }

  start(): Promise<void> {
    return this.listener.start();
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  /** the cache and loads in flight (begun before the revocation committed, they may read the token still valid) go */
  private forgetLoads(): void {
    this.epoch++;
    this.loading.clear();
  }

  private forgetAll(): void {
    this.forgetLoads();
    this.cache.clear();
    this.onRevoked?.();
  }

  private onInvalidate(payload: string): void {
    this.forgetLoads();
    const [kind, id] = payload.split(":");
    for (const [key, entry] of this.cache) {
      if (
        (kind === "token" && entry.principal.tokenId === id) ||
        (kind === "account" && entry.principal.accountId === id)
      ) {
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
    await notify(q, CHANNEL, payload);
    this.onInvalidate(payload);
  }

  /** Same as a revocation for the caches: the account's principals are reloaded with its new state. */
  async announceAccountChange(q: Queryable, accountId: string): Promise<void> {
    await this.announceRevocation(q, { accountId });
  }

  /** last_used_at is informative: written on a cache miss, at most once a minute per token and process, never failing a request. */
  private async touch(tokenId: string, now: number): Promise<void> {
    if (now - (this.touched.get(tokenId) ?? 0) < 60_000) return;
    if (this.touched.size > CACHE_MAX) this.touched.clear();
    this.touched.set(tokenId, now);
    await touchToken(this.db, tokenId).catch(() => {});
  }

  async resolve(secret: string): Promise<Principal | null> {
    // the cache is keyed by the bearer itself (it lives only in this process's memory, as the request did), so a
    // hit costs no hashing; the store is asked by the SHA-256 it keeps
    const cacheKey = secret;
    const now = Date.now();
    const hit = this.listening ? this.cache.get(cacheKey) : undefined;
    if (hit && now - hit.loadedAt < CACHE_TTL_MS) {
      if (hit.principal.expiresAt && hit.principal.expiresAt.getTime() <= now) return null;
      return hit.principal;
    }
    // concurrent misses for one token share one load
    const epoch = this.epoch;
    let pending = this.loading.get(cacheKey);
    if (!pending) {
      const load = loadPrincipal(this.db, hashSecret(secret)).finally(() => {
        if (this.loading.get(cacheKey) === load) this.loading.delete(cacheKey);
      });
      pending = load;
      this.loading.set(cacheKey, pending);
    }
    const principal = await pending;
    if (principal) await this.touch(principal.tokenId, now);
    if (principal && this.listening && epoch === this.epoch) {
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      this.cache.set(cacheKey, { principal, loadedAt: now });
    }
    return principal;
  }
}

async function loadPrincipal(db: Db, secretHash: Buffer): Promise<Principal | null> {
  const row = await principalRow(db, secretHash);
  if (!row) return null;
  return {
    accountId: row.account_id,
    owner: { kind: row.owner_kind, id: row.owner_id },
    audit: null,
    tokenId: row.id,
    kind: row.kind,
    scopes: row.scopes,
    grants: row.scopes.map(parseScope).filter((g): g is Grant => g !== null),
    expiresAt: row.expires_at,
    account: {
      id: row.account_id,
      email: row.email,
      display_name: row.display_name,
      locale: row.locale,
      has_password: row.has_password,
      account_spend_cap_krw: row.account_spend_cap_krw,
      app_spend_cap_krw: row.app_spend_cap_krw,
      created_at: row.created_at,
    },
  };
}
