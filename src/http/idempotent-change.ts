import type { FastifyRequest } from "fastify";
import type { Queryable } from "../store/db.js";
import type { AuditDraft, IdempotentChange } from "../auth/principal.js";
import { lockCommittedResult, recordCommittedResult } from "./idempotency-repo.js";

export type { IdempotentChange };

/**
 * One Idempotency-Key makes one resource, even when the process dies between the create's COMMIT and the
 * stored answer (issue 33). The create's transaction (the first audited transaction of a 201 request,
 * audit/record.ts) locks the key's row and writes its result there before COMMIT; a retry that takes the
 * key over after a crash (http/idempotency.ts) runs the handler again, and that transaction finds the
 * committed result and returns it instead of creating: the handler renders the same resource, marked replayed.
 * Every create that commits through auditedTransaction is covered without code of its own; what it returns must
 * be all the answer is made of (a secret shown once, a generated token: returned by the transaction, not kept
 * beside it), since a retry gets that value back and nothing else. A create that inserts its resource in a
 * transaction of its own before its audited one calls createOnce there (sandboxes).
 */

const claimed = new WeakMap<FastifyRequest, IdempotentChange>();

/** The HTTP layer claimed `key` for this request: its audit draft (made earlier, on request) now carries it. */
export function claimChange(request: FastifyRequest, owner: string, key: string): void {
  const change: IdempotentChange = { owner, key };
  claimed.set(request, change);
  if (request.principal?.audit) request.principal.audit.idempotency = change;
}

export const idempotentChangeOf = (request: FastifyRequest): IdempotentChange | undefined => claimed.get(request);

/**
 * The create bound to the request's key, inside `tx`: the earlier attempt's committed result, else `make()`'s,
 * written to commit with it. Without a key, or for a request that is no create (201), or once bound: `make()`.
 */
export async function createOnce<T>(
  tx: Queryable,
  draft: AuditDraft | null | undefined,
  make: () => Promise<T>,
): Promise<{ value: T; replayed: boolean }> {
  const change = draft?.status === 201 && !draft.idempotency?.bound ? draft.idempotency : undefined;
  if (!change) return { value: await make(), replayed: false };
  change.bound = true;
  const earlier = await committedResult(tx, change);
  if (earlier) {
    change.replayed = true;
    return { value: earlier.value as T, replayed: true };
  }
  const value = await make();
  let text: string;
  try {
    text = encode(value);
  } catch {
    // a result this cannot keep faithfully is not bound (the HTTP layer logs the unbound create): the request
    // still succeeds, as it did before keys were bound
    change.bound = false;
    return { value, replayed: false };
  }
  await recordCommittedResult(tx, change.owner, change.key, text);
  return { value, replayed: false };
}

/** Locks the key's row for the rest of the transaction; the earlier attempt's result if one committed. */
async function committedResult(tx: Queryable, change: IdempotentChange): Promise<{ value: unknown } | null> {
  const stored = await lockCommittedResult(tx, change.owner, change.key);
  return stored == null ? null : { value: decode(stored) };
}

// a result is rows and plain objects as services return them: JSON, keeping what JSON would change on the way back
// (a Date would come back a string, a Buffer an array); anything else is refused, so a retry never gets back a
// different value than the create returned
function encode(value: unknown): string {
  // `this[key]` is the value before its toJSON, which Date and Buffer have
  return JSON.stringify({ v: value }, function (this: Record<string, unknown>, key: string, v: unknown): unknown {
    const raw = this[key];
    if (raw instanceof Date) return { $date: raw.toISOString() };
    if (Buffer.isBuffer(raw)) return { $buffer: raw.toString("base64") };
    if (typeof raw === "bigint") return { $bigint: raw.toString() };
    if (typeof raw === "function" || typeof raw === "symbol")
      throw new Error(`idempotent result: field "${key}" is a ${typeof raw}`);
    if (raw && typeof raw === "object" && !Array.isArray(raw) && !isPlain(raw))
      throw new Error(`idempotent result: field "${key}" is a ${raw.constructor?.name ?? "class"} instance`);
    return v;
  });
}

function isPlain(o: object): boolean {
  const proto = Object.getPrototypeOf(o);
  return proto === Object.prototype || proto === null;
}

function decode(text: string): unknown {
  return (
    JSON.parse(text, (_key, v: unknown) => {
      if (v && typeof v === "object" && !Array.isArray(v)) {
        const o = v as Record<string, unknown>;
        const keys = Object.keys(o);
        if (keys.length === 1 && typeof o[keys[0]!] === "string") {
          if (keys[0] === "$date") return new Date(o.$date as string);
          if (keys[0] === "$buffer") return Buffer.from(o.$buffer as string, "base64");
          if (keys[0] === "$bigint") return BigInt(o.$bigint as string);
        }
      }
      return v;
    }) as { v?: unknown }
  ).v;
}
