import { randomBytes, randomUUID } from "node:crypto";
import type { Db } from "../store/db.js";
import { isUuid } from "../store/db.js";
import type { Principal } from "../auth/principal.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError } from "../http/errors.js";
import type { JobQueue } from "../jobs/queue.js";
import type { SecretBox } from "../kernel/secrets.js";
import { parseOutboundUrl, type Outbound } from "../net/outbound.js";
import { refusedAs400 } from "../http/outbound-refusal.js";
import { childrenOf, partnerByAccount } from "../partner/public.js";
import { validFilter } from "./catalog.js";
import { DELIVER_JOB } from "./delivery.js";
import * as hooks from "./webhook-repo.js";

/** Stripe allows 16 endpoints per account; the same bound keeps one owner's fan-out small. */
export const MAX_ENDPOINTS = 16;

export interface EndpointInput {
  url?: string;
  event_types?: string[];
  description?: string | null;
  enabled?: boolean;
  child_ids?: string[] | null;
}

export const endpointView = (e: hooks.EndpointRow) => ({
  id: e.id,
  url: e.url,
  description: e.description,
  event_types: e.event_types,
  child_ids: e.child_ids,
  enabled: e.enabled,
  disabled_reason: e.disabled_reason,
  failing_since: e.failing_since?.toISOString() ?? null,
  previous_secret_expires_at:
    e.previous_secret_expires_at && e.previous_secret_expires_at > new Date()
      ? e.previous_secret_expires_at.toISOString()
      : null,
  created_at: e.created_at.toISOString(),
  updated_at: e.updated_at.toISOString(),
});

export const deliveryView = (r: hooks.DeliveryListRow) => ({
  id: r.id,
  event_id: r.event_id,
  event_type: r.event_type,
  state: r.state,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at?.toISOString() ?? null,
  last_status: r.last_status,
  last_latency_ms: r.last_latency_ms,
  last_answer: r.last_answer,
  last_error: r.last_error,
  last_attempt_at: r.last_attempt_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
});

const newSecret = () => `whsec_${randomBytes(32).toString("base64url")}`;

export function webhookService(d: { db: Db; secrets: SecretBox; outbound: Outbound; jobs: JobQueue }) {
  const seal = (s: string) => d.secrets.seal(s, hooks.SECRET_COLUMN);

  const checkUrl = (raw: string): Promise<string> =>
    refusedAs400("url", async () => {
      const url = parseOutboundUrl(raw);
      await d.outbound.check(url.href);
      return url.href;
    });

  function checkTypes(types: string[]): string[] {
    const bad = types.find((t) => !validFilter(t));
    if (bad) throw new ApiError("bad_event_type", `${JSON.stringify(bad)} is not an event type (GET /v1/event-types).`);
    return [...new Set(types)];
  }

  /** `child_ids` narrows a partner's endpoint to some of its children (null: all); only a partner names children. */
  async function checkChildren(p: Principal, ids: string[] | null | undefined): Promise<string[] | null | undefined> {
    if (ids === undefined || ids === null) return ids;
    const partner = p.owner.kind === "account" ? await partnerByAccount(d.db, p.owner.id) : null;
    if (!partner) throw new ApiError("invalid_request", "child_ids: only a partner account's endpoints name children.");
    const mine = new Set(await childrenOf(d.db, partner.account_id));
    const bad = ids.find((id) => !mine.has(id));
    if (bad) throw new ApiError("invalid_request", `child_ids: ${bad} is not one of the caller's child users.`);
    return [...new Set(ids)];
  }

  async function endpoint(
    p: Principal,
    id: string,
    q: Db | Parameters<typeof hooks.getEndpoint>[0] = d.db,
    lock = false,
  ) {
    const e = isUuid(id) ? await hooks.getEndpoint(q, p.owner, id, lock) : null;
    if (!e) throw new ApiError("not_found", "No such webhook endpoint.");
    return e;
  }

  return {
    async create(p: Principal, input: Required<Pick<EndpointInput, "url" | "event_types">> & EndpointInput) {
      const url = await checkUrl(input.url);
      const types = checkTypes(input.event_types);
      const childIds = await checkChildren(p, input.child_ids);
      const secret = newSecret();
      const row = await auditedTransaction(d.db, p, async (tx) => {
        if ((await hooks.countEndpoints(tx, p.owner)) >= MAX_ENDPOINTS)
          throw new ApiError("invalid_request", `At most ${MAX_ENDPOINTS} webhook endpoints per owner.`);
        return hooks.insertEndpoint(tx, {
          id: randomUUID(),
          owner_kind: p.owner.kind,
          owner_id: p.owner.id,
          account_id: p.accountId,
          url,
          description: input.description ?? null,
          event_types: types,
          secret_sealed: seal(secret),
          notify_email: p.account.email,
          child_ids: childIds ?? null,
        });
      });
      return { row, secret };
    },
    list: (p: Principal) => hooks.listEndpoints(d.db, p.owner),
    get: (p: Principal, id: string) => endpoint(p, id),
    async update(p: Principal, id: string, input: EndpointInput) {
      const url = input.url === undefined ? undefined : await checkUrl(input.url);
      const types = input.event_types === undefined ? undefined : checkTypes(input.event_types);
      const childIds = await checkChildren(p, input.child_ids);
      return auditedTransaction(d.db, p, async (tx) => {
        await endpoint(p, id, tx, true);
        return hooks.updateEndpoint(tx, id, {
          url,
          event_types: types,
          description: input.description,
          enabled: input.enabled,
          child_ids: childIds,
        });
      });
    },
    async remove(p: Principal, id: string) {
      return auditedTransaction(d.db, p, async (tx) => {
        const e = await endpoint(p, id, tx, true);
        await hooks.removeEndpoint(tx, e.id);
        return e;
      });
    },
    /** A new secret from now; the old one keeps signing beside it for `previousValidSeconds` (0: stops at once). */
    async rollSecret(p: Principal, id: string, previousValidSeconds: number) {
      const secret = newSecret();
      const row = await auditedTransaction(d.db, p, async (tx) => {
        const e = await endpoint(p, id, tx, true);
        const keep = previousValidSeconds > 0;
        return hooks.rollSecret(
          tx,
          e.id,
          seal(secret),
          keep ? e.secret_sealed : null,
          keep ? new Date(Date.now() + previousValidSeconds * 1000) : null,
        );
      });
      return { row, secret };
    },
    async deliveries(p: Principal, id: string, limit: number, cursor?: string) {
      const e = await endpoint(p, id);
      let before: { created_at: Date; id: string } | null = null;
      if (cursor) {
        const [row] = isUuid(cursor) ? await hooks.listDeliveries(d.db, e.id, null, 1, cursor) : [];
        if (!row) throw new ApiError("bad_cursor", "cursor is not one this endpoint returned.");
        before = { created_at: row.created_at, id: row.id };
      }
      const rows = await hooks.listDeliveries(d.db, e.id, before, limit + 1);
      const page = rows.slice(0, limit);
      return { items: page.map(deliveryView), next_cursor: rows.length > limit ? page[page.length - 1].id : null };
    },
    async delivery(p: Principal, id: string, deliveryId: string) {
      const e = await endpoint(p, id);
      const [row] = isUuid(deliveryId) ? await hooks.listDeliveries(d.db, e.id, null, 1, deliveryId) : [];
      if (!row) throw new ApiError("not_found", "No such delivery.");
      const attempts = await hooks.attemptsOf(d.db, row.id);
      return {
        ...deliveryView(row),
        attempts: attempts.map((a) => ({
          at: a.at.toISOString(),
          manual: a.manual,
          status: a.status,
          latency_ms: a.latency_ms,
          answer_excerpt: a.answer_excerpt,
          error: a.error,
        })),
      };
    },
    /** One more attempt now, whatever the delivery's state (Stripe's resend); it does not start a retry schedule. */
    async redeliver(p: Principal, id: string, deliveryId: string) {
      const view = await this.delivery(p, id, deliveryId);
      await auditedTransaction(d.db, p, (tx) => d.jobs.sendIn(tx, DELIVER_JOB, { delivery_id: view.id, manual: true }));
      d.jobs.wakeLocal(DELIVER_JOB);
      return view;
    },
  };
}
export type WebhookService = ReturnType<typeof webhookService>;
