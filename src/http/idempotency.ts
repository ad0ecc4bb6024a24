import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Db } from "../store/db.js";
import { ApiError } from "./errors.js";
import { claimChange, idempotentChangeOf } from "./idempotent-change.js";
import { claimKey, releaseKey, storedResponse, storeResponse } from "./idempotency-repo.js";

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
// a request that crashed mid-flight leaves a "running" row; a retry takes it over as soon as the process
// that ran it is known to be dead (its lease, src/hosts), or after this long when that is not known
const LOCK_MS = 60_000;
const WAIT_STEP_MS = 100;
const WAIT_MAX_MS = 30_000;

/**
 * Idempotency-Key on every POST: the first completed response for (caller, key) is kept 24 h and
 * replayed to retries; the same key with another request gives 422; concurrent duplicates wait for
 * the first and get its response, so only one causes an effect. A create's result commits with the key
 * (idempotent-change.ts), so a retry after a crash between that COMMIT and the stored answer makes nothing new.
 */
export class Idempotency {
  /** `lease`: this process's lease id (null until it holds one), recorded on the keys it runs */
  constructor(
    private db: Db,
    private lease: () => string | null = () => null,
  ) {}

  /** preHandler: returns true when the reply was served from the store. */
  async begin(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const key = request.headers["idempotency-key"];
    if (request.method !== "POST" || key === undefined) return false;
    if (typeof key !== "string" || !KEY_PATTERN.test(key)) {
      throw new ApiError("invalid_request", "Idempotency-Key must be 1-255 visible ASCII characters.");
    }
    const hash = requestHash(request);
    const started = Date.now();
    for (;;) {
      const claimed = await claimKey(this.db, {
        owner: request.callerKey,
        key,
        hash,
        lockMs: LOCK_MS,
        processId: this.lease(),
      });
      if (claimed) {
        (request as { idempotencyKey?: string }).idempotencyKey = key;
        claimChange(request, request.callerKey, key);
        return false;
      }
      const stored = await storedResponse(this.db, request.callerKey, key);
      if (!stored) continue; // expired between the two statements: claim again
      if (stored.request_hash !== hash) {
        throw new ApiError("idempotency_key_reused", "This Idempotency-Key was already used with a different request.");
      }
      if (stored.state === "done") {
        reply.header("idempotent-replayed", "true");
        for (const [name, value] of Object.entries(stored.response_headers ?? {})) reply.header(name, value);
        reply
          .code(stored.response_status!)
          .type("application/json; charset=utf-8")
          .send(stored.response_body ?? "");
        return true;
      }
      if (Date.now() - started > WAIT_MAX_MS) {
        throw new ApiError(
          "idempotency_in_progress",
          "A request with this Idempotency-Key is still being processed; retry shortly.",
        );
      }
      await new Promise((r) => setTimeout(r, WAIT_STEP_MS));
    }
  }

  /** onSend: keep the completed response; a server error frees the key so a retry can run again. */
  async complete(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<void> {
    const key = (request as { idempotencyKey?: string }).idempotencyKey;
    if (!key) return;
    (request as { idempotencyKey?: string }).idempotencyKey = undefined;
    if (reply.statusCode >= 500) {
      // a create that committed keeps its result for the retry (idempotent-change.ts): only the lock is let go
      await releaseKey(this.db, request.callerKey, key);
      return;
    }
    const change = idempotentChangeOf(request);
    // the resource was made by an earlier attempt that died before answering: this answer is a replay too
    if (change?.replayed) reply.header("idempotent-replayed", "true");
    // a create for a caller that committed without createOnce: a retry after a crash would make a second one
    if (reply.statusCode === 201 && request.principal?.audit && change && !change.bound)
      request.log.error(
        { route: request.routeOptions.url },
        "this create did not bind its Idempotency-Key (http/idempotent-change.ts createOnce): not safe across a crash",
      );
    const headers: Record<string, string> = {};
    const location = reply.getHeader("location");
    if (typeof location === "string") headers.location = location;
    await storeResponse(this.db, request.callerKey, key, {
      status: reply.statusCode,
      headers,
      body: typeof payload === "string" ? payload : payload == null ? "" : String(payload),
    });
  }
}

function requestHash(request: FastifyRequest): string {
  return createHash("sha256")
    .update(request.method)
    .update("\0")
    .update(request.url)
    .update("\0")
    .update(JSON.stringify(request.body ?? null))
    .digest("hex");
}
