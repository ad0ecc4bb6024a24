import type { Grant } from "./scopes.js";
import type { Owner } from "../kernel/owner.js";

/**
 * The authenticated caller, travelling as one object: who acts (the account), for whom (the owner of
 * what it creates and sees), with which token and scopes. Services take it, never a bare account id.
 */
export interface Principal {
  /** the acting account */
  accountId: string;
  /** whose resources this token works on: the account itself, or (with an organization key) the organization */
  owner: Owner;
  tokenId: string;
  kind: "full" | "scoped";
  grants: Grant[];
  scopes: string[];
  expiresAt: Date | null;
  /** The account as loaded with the token; dropped with it whenever the account changes (NOTIFY), so never stale for long. */
  account: AccountSnapshot;
  /** set per request on mutations: the audit row the service commits with its change (audit/record.ts) */
  audit: AuditDraft | null;
}

/** The audit row of one mutation, waiting for the transaction of the change it records. */
export interface AuditDraft {
  action: string;
  /** what kind of resource the request works on: its auth rule's scope resource ("pods", "org"), else its first tag */
  resourceKind?: string | null;
  target: string | null;
  ip: string;
  requestId: string;
  /** the route's success status, recorded with the change */
  status: number;
  /** true once a transaction committed the row; the HTTP layer then writes no second one */
  written: boolean;
  /** the request's Idempotency-Key: a create's transaction commits its result with it (http/idempotent-change.ts) */
  idempotency?: IdempotentChange;
}

export interface AccountSnapshot {
  id: string;
  email: string;
  display_name: string | null;
  locale: "ko" | "en";
  has_password: boolean;
  account_spend_cap_krw: number | null;
  app_spend_cap_krw: number | null;
  created_at: Date;
}

/** Instance refs (ids or slugs) a list endpoint must narrow to; null means every instance. */
export type InstanceFilter = string[] | null;

/**
 * The caller of a route whose auth rule needs a token (authorize() has checked there is one). Routes
 * hand it to services whole, never a bare account id.
 */
export function callerOf(request: { principal: Principal | null }): Principal {
  if (!request.principal) throw new Error("callerOf: the route's auth rule does not require a token");
  return request.principal;
}

/** The token id of work the platform does itself (operator routes, the autoscaler): no token row backs it. */
export const SYSTEM_TOKEN_ID = "00000000-0000-0000-0000-000000000000";

/**
 * A principal for work the platform does on an account's behalf (an operator's linked deploy, the autoscaler):
 * full rights within the owner, no scopes to check, the given audit row. Nothing on these paths reads the
 * account snapshot beyond id and e-mail (admission and caps read the store).
 */
export function systemPrincipal(a: {
  accountId: string;
  owner: Owner;
  email: string;
  displayName: string | null;
  audit: AuditDraft;
}): Principal {
  return {
    accountId: a.accountId,
    owner: a.owner,
    tokenId: SYSTEM_TOKEN_ID,
    kind: "full",
    grants: [],
    scopes: [],
    expiresAt: null,
    account: {
      id: a.accountId,
      email: a.email,
      display_name: a.displayName,
      locale: "en",
      has_password: false,
      account_spend_cap_krw: null,
      app_spend_cap_krw: null,
      created_at: new Date(0),
    },
    audit: a.audit,
  };
}

/** The request's Idempotency-Key as a create's transaction sees it (src/http/idempotent-change.ts binds it). */
export interface IdempotentChange {
  /** idempotency_keys.owner: the caller key the HTTP layer claimed the key under */
  owner: string;
  key: string;
  /** set when the result came from an earlier attempt's transaction, not from this one */
  replayed?: boolean;
  /** set once a transaction of the request bound its result to the key: later ones do not */
  bound?: boolean;
}
