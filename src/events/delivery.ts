import { createHmac, randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import { inTransaction, type Db } from "../store/db.js";
import type { JobQueue } from "../jobs/queue.js";
import type { Mailer } from "../kernel/contracts.js";
import type { SecretBox } from "../kernel/secrets.js";
import { OutboundError, type Outbound } from "../net/outbound.js";
import { childOf } from "../partner/public.js";
import type { Owner } from "../kernel/owner.js";
import { filterMatches } from "./catalog.js";
import { recordEvent } from "./public.js";
import { eventView } from "./service.js";
import * as repo from "./repo.js";
import * as hooks from "./webhook-repo.js";

export const DELIVER_JOB = "events.webhook.deliver";
const BATCH = 1000;
const EXCERPT = 1024;

export interface DeliveryConfig {
  /** the first retry's delay; each next one doubles, up to maxDelaySeconds */
  retryBaseSeconds: number;
  maxDelaySeconds: number;
  /** retries go on this long after the event (Stripe: 3 days) */
  retryWindowSeconds: number;
  /** an endpoint failing without a success this long is disabled, with a mail */
  disableAfterSeconds: number;
  timeoutMs: number;
  /** a sender's hold on a delivery; a sender killed mid-attempt is replaced after it lapses */
  claimSeconds: number;
  /** how often the sweep looks for stranded deliveries */
  sweepMs: number;
}

/** `t=<unix>,v1=<hex>` per secret, as Stripe signs: HMAC-SHA256 of `<t>.<body>`; a rolled secret signs beside the new one. */
export function signature(secrets: string[], unix: number, body: string): string {
  const sigs = secrets.map((s) => `v1=${createHmac("sha256", s).update(`${unix}.${body}`).digest("hex")}`);
  return [`t=${unix}`, ...sigs].join(",");
}

export function backoffSeconds(c: DeliveryConfig, attempts: number): number {
  const base = Math.min(c.maxDelaySeconds, c.retryBaseSeconds * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.9 + Math.random() * 0.2) * 1000) / 1000; // ±10% so a recovering receiver is not hit at once
}

export interface Deliverer {
  /**
   * Fans out everything committed since the last run: deliveries commit with the new position, then their first
   * attempts go out at once from this process (`sendFirst`). `held`: committed rows wait behind a running
   * transaction, so the caller reads again soon.
   */
  dispatch(): Promise<{ n: number; held: boolean }>;
  deliver(deliveryId: string, manual: boolean, known?: Known): Promise<void>;
  /** queues again pending deliveries whose sender vanished */
  sweep(): Promise<number>;
  /** first attempts waiting for or in a send slot in this process */
  backlog(): number;
}

/** What the dispatcher read already, so a first attempt does not read it again. */
interface Known {
  endpoint: hooks.EndpointRow;
  event: repo.EventRow;
  /** the fan-out inserted the delivery claimed for this process until about then (ms) */
  claimedUntil?: number;
}

/**
 * A bounded pool of first attempts in this process. Not durable on purpose: a delivery row is pending and claimed
 * for this process from the fan-out's commit, so if this process dies before or during an attempt, the sweep
 * queues the delivery on the durable queue once the claim lapses (at least once); retries always go through it.
 */
function sendPool(concurrency: number, send: (id: string, known: Known) => Promise<void>, log: FastifyBaseLogger) {
  const waiting: { id: string; known: Known }[] = [];
  let active = 0;
  const pump = () => {
    while (active < concurrency && waiting.length) {
      const next = waiting.shift()!;
      active++;
      send(next.id, next.known)
        .catch((err) => log.warn({ err, delivery: next.id }, "first webhook attempt failed; the sweep queues it again"))
        .finally(() => {
          active--;
          pump();
        });
    }
  };
  return {
    push(items: { id: string; known: Known }[]) {
      waiting.push(...items);
      pump();
    },
    size: () => waiting.length + active,
  };
}

export function createDeliverer(d: {
  db: Db;
  jobs: JobQueue;
  secrets: SecretBox;
  outbound: Outbound;
  mailer: () => Mailer;
  log: FastifyBaseLogger;
  config: DeliveryConfig;
  /** first attempts in flight at once in this process */
  concurrency: number;
}): Deliverer {
  const c = d.config;
  const pool = sendPool(d.concurrency, (id, known) => deliver(id, false, known), d.log);

  async function dispatch(): Promise<{ n: number; held: boolean }> {
    let total = 0;
    for (;;) {
      // the fan-out claims its deliveries for this process's first attempts; the claim runs from the transaction's
      // start in the store, so this clock read before it is a safe lower bound
      const claimedUntil = Date.now() + c.claimSeconds * 1000;
      const { created, more, held } = await inTransaction(d.db, async (tx) => {
        const pos = await hooks.lockDispatch(tx);
        const { rows, held } = await repo.readAfter(tx, null, pos, BATCH);
        if (!rows.length) return { created: [], more: false, held };
        // a partner's endpoints also receive its live children's events (unless their child_ids leave a child out)
        const partnerOfChild = new Map<string, string | null>();
        for (const r of rows)
          if (r.owner_kind === "partner_child" && !partnerOfChild.has(r.owner_id))
            partnerOfChild.set(
              r.owner_id,
              (await childOf(tx, { kind: "partner_child", id: r.owner_id }))?.child.partner_id ?? null,
            );
        const owners = new Map<string, Owner>();
        for (const r of rows) owners.set(`${r.owner_kind}:${r.owner_id}`, { kind: r.owner_kind, id: r.owner_id });
        for (const partner of partnerOfChild.values())
          if (partner) owners.set(`account:${partner}`, { kind: "account", id: partner });
        const endpoints = await hooks.endpointsOf(tx, [...owners.values()]);
        const pairs: { id: string; known: Known }[] = [];
        for (const r of rows)
          for (const ep of endpoints) {
            const own = ep.owner_kind === r.owner_kind && ep.owner_id === r.owner_id;
            const child =
              r.owner_kind === "partner_child" &&
              ep.owner_kind === "account" &&
              partnerOfChild.get(r.owner_id) === ep.owner_id &&
              (ep.child_ids === null || ep.child_ids.includes(r.owner_id));
            if (!(own || child) || !filterMatches(ep.event_types, r.type)) continue;
            pairs.push({ id: randomUUID(), known: { endpoint: ep, event: r, claimedUntil } });
          }
        const inserted = new Set(
          await hooks.insertDeliveries(
            tx,
            pairs.map((p) => ({ id: p.id, endpointId: p.known.endpoint.id, seq: p.known.event.seq })),
            c.claimSeconds,
          ),
        );
        const last = rows[rows.length - 1];
        await hooks.setDispatch(tx, { tx: last.tx, seq: last.seq });
        return { created: pairs.filter((p) => inserted.has(p.id)), more: rows.length === BATCH, held };
      });
      total += created.length;
      pool.push(created);
      if (!more) return { n: total, held };
    }
  }

  async function attempt(url: string, headers: Record<string, string>, body: string): Promise<hooks.AttemptResult> {
    const started = performance.now();
    try {
      const res = await d.outbound.request(url, {
        method: "POST",
        headers,
        body,
        timeoutMs: c.timeoutMs,
        maxBytes: 256 * 1024,
      });
      return {
        status: res.status,
        latencyMs: Math.round(performance.now() - started),
        answer: res.body.slice(0, EXCERPT),
        error: res.status >= 200 && res.status < 300 ? null : `answered ${res.status}`,
        manual: false,
      };
    } catch (err) {
      const message = err instanceof OutboundError ? `${err.reason}: ${err.message}` : (err as Error).message;
      return {
        status: null,
        latencyMs: Math.round(performance.now() - started),
        answer: null,
        error: message,
        manual: false,
      };
    }
  }

  async function deliver(deliveryId: string, manual: boolean, known?: Known): Promise<void> {
    // a first attempt still well inside the fan-out's claim needs no claim of its own (a query less per delivery);
    // one that waited in the pool too long claims again, as a queued retry does
    const held = known?.claimedUntil && Date.now() + c.timeoutMs + 1000 < known.claimedUntil;
    const delivery = held
      ? firstAttempt(deliveryId, known)
      : await hooks.claimDelivery(d.db, deliveryId, c.claimSeconds, manual);
    if (!delivery) return; // done already (a repeated job) or another sender holds it
    const endpoint = known?.endpoint ?? (await hooks.endpointById(d.db, delivery.endpoint_id));
    const event = known?.event ?? (await repo.eventBySeq(d.db, delivery.event_seq));
    if (!endpoint || !event) return;
    const body = JSON.stringify(eventView(event));
    const now = Date.now();
    const secrets = [d.secrets.open(endpoint.secret_sealed, hooks.SECRET_COLUMN)];
    if (
      endpoint.previous_secret_sealed &&
      endpoint.previous_secret_expires_at &&
      endpoint.previous_secret_expires_at.getTime() > now
    )
      secrets.push(d.secrets.open(endpoint.previous_secret_sealed, hooks.SECRET_COLUMN));
    const result = await attempt(
      endpoint.url,
      {
        "content-type": "application/json",
        "user-agent": "Platform-Webhooks/1.0",
        "platform-signature": signature(secrets, Math.floor(now / 1000), body),
        "platform-event-id": event.id,
        "platform-event-type": event.type,
        "platform-delivery-id": delivery.id,
        "platform-delivery-attempt": String(delivery.attempts + 1),
      },
      body,
    );
    result.manual = manual;
    // the common case in one statement: no endpoint lock, and the endpoint row is written only when it was failing
    if (result.error === null) return hooks.recordSuccess(d.db, delivery.id, endpoint.id, result);
    const disabled = await inTransaction(d.db, async (tx) => {
      const ep = await hooks.endpointById(tx, endpoint.id, true);
      await hooks.insertAttempt(tx, delivery.id, result);
      // a failed scheduled attempt retries within the window (on the durable queue); a manual one changes nothing
      let state: hooks.DeliveryRow["state"] = delivery.state;
      let next: Date | null = null;
      if (!manual && delivery.state === "pending") {
        const delay = backoffSeconds(c, delivery.attempts + 1);
        const deadline = event.created_at.getTime() + c.retryWindowSeconds * 1000;
        if (now + delay * 1000 <= deadline && ep?.enabled && !ep.removed_at) {
          next = new Date(now + delay * 1000);
          await d.jobs.sendIn(tx, DELIVER_JOB, { delivery_id: delivery.id }, { startAfterSeconds: delay });
        } else state = "failed";
      }
      await hooks.finishAttempt(tx, delivery.id, result, {
        state,
        nextAttemptAt: state !== "pending" ? null : manual ? delivery.next_attempt_at : next,
      });
      if (!ep) return null;
      await hooks.setEndpointHealth(tx, ep.id, false);
      const failingSince = ep.failing_since ?? new Date();
      if (ep.enabled && now - failingSince.getTime() >= c.disableAfterSeconds * 1000) {
        const reason = `every delivery failed since ${failingSince.toISOString()} (last: ${result.error})`;
        await hooks.disableEndpoint(tx, ep.id, reason);
        await recordEvent(tx, {
          type: "webhook_endpoint.disabled",
          owner: { kind: ep.owner_kind, id: ep.owner_id },
          resource: { kind: "webhook_endpoint", id: ep.id },
          data: { url: ep.url, reason },
        });
        return { ep, reason };
      }
      return null;
    });
    if (disabled)
      await d
        .mailer()
        .send({
          to: disabled.ep.notify_email,
          subject: `Webhook endpoint disabled: ${disabled.ep.url}`,
          text: [
            `The webhook endpoint ${disabled.ep.url} (${disabled.ep.id}) was disabled: ${disabled.reason}.`,
            "Events are still recorded (GET /v1/events). Fix the receiver, then enable the endpoint again with",
            `PATCH /v1/webhook-endpoints/${disabled.ep.id} {"enabled": true}; failed deliveries can be sent again from its delivery log.`,
          ].join("\n"),
        })
        .catch((err) => d.log.warn({ err, endpoint: disabled.ep.id }, "webhook disable notice not sent"));
  }

  /** The delivery row as the fan-out inserted it (pending, no attempt yet), without reading it back. */
  function firstAttempt(id: string, k: Known): hooks.DeliveryRow {
    return {
      id,
      endpoint_id: k.endpoint.id,
      event_seq: k.event.seq,
      state: "pending",
      attempts: 0,
      next_attempt_at: new Date(),
      last_status: null,
      last_latency_ms: null,
      last_answer: null,
      last_error: null,
      last_attempt_at: null,
      created_at: new Date(),
      claimed_until: new Date(k.claimedUntil!),
    };
  }

  async function sweep(): Promise<number> {
    const grace = c.claimSeconds; // a second job for a delivery only queued late is harmless: the claim lets one through
    const ids = await hooks.strandedDeliveries(d.db, grace, 500);
    for (const id of ids)
      await inTransaction(d.db, async (tx) => {
        await hooks.pushBack(tx, id);
        await d.jobs.sendIn(tx, DELIVER_JOB, { delivery_id: id });
      });
    if (ids.length) d.jobs.wakeLocal(DELIVER_JOB);
    return ids.length;
  }

  return { dispatch, deliver, sweep, backlog: pool.size };
}
