import { allRows, allValues, oneRow, returnedIds, returnedRow, type Queryable } from "../store/db.js";
import { countByOwner, findByRef, listByRefs, type RefLookup } from "../store/find.js";
import type { Owner } from "../kernel/owner.js";
import type { Position } from "./repo.js";

/** The SQL of webhook endpoints, their deliveries and attempts, and the dispatcher's position. */
export interface EndpointRow {
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  url: string;
  description: string | null;
  event_types: string[];
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: Date | null;
  notify_email: string;
  created_at: Date;
  updated_at: Date;
  removed_at: Date | null;
  /** a partner's endpoint: which children's events it receives (null: every child's) */
  child_ids: string[] | null;
}

export const SECRET_COLUMN = "webhook_endpoints.secret_sealed";

export async function insertEndpoint(
  q: Queryable,
  e: Pick<
    EndpointRow,
    | "id"
    | "owner_kind"
    | "owner_id"
    | "account_id"
    | "url"
    | "description"
    | "event_types"
    | "secret_sealed"
    | "notify_email"
    | "child_ids"
  >,
): Promise<EndpointRow> {
  return returnedRow<EndpointRow>(
    q,
    `INSERT INTO webhook_endpoints (id, owner_kind, owner_id, account_id, url, description, event_types, secret_sealed, notify_email, child_ids)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
    [
      e.id,
      e.owner_kind,
      e.owner_id,
      e.account_id,
      e.url,
      e.description,
      e.event_types,
      e.secret_sealed,
      e.notify_email,
      e.child_ids,
    ],
  );
}

/** webhook_endpoints as the shared lookups read it: an owner's endpoints not removed, found by id only */
const ENDPOINTS: RefLookup = { table: "webhook_endpoints", refColumn: null, where: "removed_at IS NULL" };

export const listEndpoints = (q: Queryable, owner: Owner): Promise<EndpointRow[]> =>
  listByRefs<EndpointRow>(q, ENDPOINTS, owner, null, "created_at, id");

export const countEndpoints = (q: Queryable, owner: Owner): Promise<number> => countByOwner(q, ENDPOINTS, owner);

export const getEndpoint = (q: Queryable, owner: Owner, id: string, lock = false): Promise<EndpointRow | null> =>
  findByRef<EndpointRow>(q, ENDPOINTS, owner, id, { forUpdate: lock });

export async function updateEndpoint(
  q: Queryable,
  id: string,
  f: Partial<Pick<EndpointRow, "url" | "description" | "event_types" | "enabled" | "child_ids">>,
): Promise<EndpointRow> {
  return returnedRow<EndpointRow>(
    q,
    `UPDATE webhook_endpoints SET url = COALESCE($2, url), description = CASE WHEN $3::boolean THEN $4 ELSE description END,
       child_ids = CASE WHEN $7::boolean THEN $8::uuid[] ELSE child_ids END,
       event_types = COALESCE($5, event_types), enabled = COALESCE($6, enabled),
       disabled_reason = CASE WHEN $6 IS TRUE THEN NULL ELSE disabled_reason END,
       failing_since = CASE WHEN $6 IS TRUE THEN NULL ELSE failing_since END, updated_at = now()
     WHERE id = $1 RETURNING *`,
    [
      id,
      f.url ?? null,
      f.description !== undefined,
      f.description ?? null,
      f.event_types ?? null,
      f.enabled ?? null,
      f.child_ids !== undefined,
      f.child_ids ?? null,
    ],
  );
}

export async function removeEndpoint(q: Queryable, id: string): Promise<void> {
  await q.query(`UPDATE webhook_endpoints SET removed_at = now(), enabled = false, updated_at = now() WHERE id = $1`, [
    id,
  ]);
  // deliveries still waiting end here: nobody is left to receive them
  await q.query(
    `UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL, last_error = 'endpoint deleted'
     WHERE endpoint_id = $1 AND state = 'pending'`,
    [id],
  );
}

export async function rollSecret(
  q: Queryable,
  id: string,
  sealed: string,
  previousSealed: string | null,
  previousExpiresAt: Date | null,
): Promise<EndpointRow> {
  return returnedRow<EndpointRow>(
    q,
    `UPDATE webhook_endpoints SET secret_sealed = $2, previous_secret_sealed = $3, previous_secret_expires_at = $4,
       updated_at = now() WHERE id = $1 RETURNING *`,
    [id, sealed, previousSealed, previousExpiresAt],
  );
}

/** Enabled endpoints of these owners (the dispatcher's fan-out). */
export async function endpointsOf(q: Queryable, owners: Owner[]): Promise<EndpointRow[]> {
  if (!owners.length) return [];
  return allRows<EndpointRow>(
    q,
    `SELECT * FROM webhook_endpoints WHERE enabled AND removed_at IS NULL
       AND (owner_kind || ':' || owner_id::text) = ANY($1)`,
    [owners.map((o) => `${o.kind}:${o.id}`)],
  );
}

// ---- the dispatcher's position

/** Locks the dispatcher's position: one process fans out at a time, the others wait and then read after it. */
export async function lockDispatch(q: Queryable): Promise<Position> {
  return returnedRow<Position>(q, `SELECT tx, seq FROM event_dispatch WHERE id = 1 FOR UPDATE`);
}

export async function setDispatch(q: Queryable, p: Position): Promise<void> {
  await q.query(`UPDATE event_dispatch SET tx = $1::xid8, seq = $2 WHERE id = 1`, [p.tx, p.seq]);
}

// ---- deliveries

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_seq: number;
  state: "pending" | "succeeded" | "failed";
  attempts: number;
  next_attempt_at: Date | null;
  last_status: number | null;
  last_latency_ms: number | null;
  last_answer: string | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  created_at: Date;
  claimed_until: Date | null;
}

/**
 * New deliveries in one statement, claimed for `claimSeconds` by the process that sends their first attempts;
 * answers the ids inserted (a pair that exists already, from a fan-out repeated after a crash, is left out).
 */
export async function insertDeliveries(
  q: Queryable,
  items: { id: string; endpointId: string; seq: number }[],
  claimSeconds: number,
): Promise<string[]> {
  if (!items.length) return [];
  return returnedIds(
    q,
    `INSERT INTO webhook_deliveries (id, endpoint_id, event_seq, state, next_attempt_at, claimed_until)
     SELECT id, endpoint_id, event_seq, 'pending', now(), now() + make_interval(secs => $4)
       FROM unnest($1::uuid[], $2::uuid[], $3::bigint[]) AS t(id, endpoint_id, event_seq)
     ON CONFLICT (endpoint_id, event_seq) DO NOTHING RETURNING id`,
    [items.map((i) => i.id), items.map((i) => i.endpointId), items.map((i) => i.seq), claimSeconds],
  );
}

/** A successful attempt in one statement: its log row, the delivery done, and the endpoint healthy again if it was failing. */
export async function recordSuccess(
  q: Queryable,
  deliveryId: string,
  endpointId: string,
  a: AttemptResult,
): Promise<void> {
  await q.query(
    `WITH attempt AS (
       INSERT INTO webhook_attempts (delivery_id, manual, status, latency_ms, answer_excerpt, error) VALUES ($1, $3, $4, $5, $6, NULL)
     ), healthy AS (
       UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $2 AND failing_since IS NOT NULL
     )
     UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = $4, last_latency_ms = $5, last_answer = $6,
       last_error = NULL, last_attempt_at = now(), state = 'succeeded', next_attempt_at = NULL, claimed_until = NULL
     WHERE id = $1`,
    [deliveryId, endpointId, a.manual, a.status, a.latencyMs, a.answer],
  );
}

/**
 * Takes a delivery for one attempt: a pending one not held by another sender (or any, for a manual redelivery),
 * held for `claimSeconds`. Null: done already, or someone else is sending it now.
 */
export async function claimDelivery(
  q: Queryable,
  id: string,
  claimSeconds: number,
  manual: boolean,
): Promise<DeliveryRow | null> {
  return oneRow<DeliveryRow>(
    q,
    `UPDATE webhook_deliveries SET claimed_until = now() + make_interval(secs => $2)
     WHERE id = $1 AND (claimed_until IS NULL OR claimed_until < now()) AND ($3 OR state = 'pending') RETURNING *`,
    [id, claimSeconds, manual],
  );
}

export async function endpointById(q: Queryable, id: string, lock = false): Promise<EndpointRow | null> {
  return oneRow<EndpointRow>(q, `SELECT * FROM webhook_endpoints WHERE id = $1 ${lock ? "FOR UPDATE" : ""}`, [id]);
}

export interface AttemptResult {
  status: number | null;
  latencyMs: number;
  answer: string | null;
  error: string | null;
  manual: boolean;
}

export async function insertAttempt(q: Queryable, deliveryId: string, a: AttemptResult): Promise<void> {
  await q.query(
    `INSERT INTO webhook_attempts (delivery_id, manual, status, latency_ms, answer_excerpt, error) VALUES ($1, $2, $3, $4, $5, $6)`,
    [deliveryId, a.manual, a.status, a.latencyMs, a.answer, a.error],
  );
}

/** Records an attempt's outcome on the delivery and releases its claim. */
export async function finishAttempt(
  q: Queryable,
  id: string,
  a: AttemptResult,
  next: { state: DeliveryRow["state"]; nextAttemptAt: Date | null },
): Promise<void> {
  await q.query(
    `UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = $2, last_latency_ms = $3, last_answer = $4,
       last_error = $5, last_attempt_at = now(), state = $6, next_attempt_at = $7, claimed_until = NULL WHERE id = $1`,
    [id, a.status, a.latencyMs, a.answer, a.error, next.state, next.nextAttemptAt],
  );
}

export async function setEndpointHealth(q: Queryable, id: string, ok: boolean): Promise<void> {
  await q.query(
    `UPDATE webhook_endpoints SET failing_since = CASE WHEN $2 THEN NULL ELSE COALESCE(failing_since, now()) END WHERE id = $1`,
    [id, ok],
  );
}

export async function disableEndpoint(q: Queryable, id: string, reason: string): Promise<void> {
  await q.query(
    `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, updated_at = now() WHERE id = $1`,
    [id, reason],
  );
  await q.query(
    `UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL, last_error = 'endpoint disabled'
     WHERE endpoint_id = $1 AND state = 'pending'`,
    [id],
  );
}

/** Pending deliveries overdue by `graceSeconds` and held by nobody: their job was lost (a sender killed mid-attempt). */
export async function strandedDeliveries(q: Queryable, graceSeconds: number, limit: number): Promise<string[]> {
  return allValues<string>(
    q,
    "id",
    `SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at < now() - make_interval(secs => $1)
       AND (claimed_until IS NULL OR claimed_until < now()) ORDER BY next_attempt_at LIMIT $2`,
    [graceSeconds, limit],
  );
}

export async function pushBack(q: Queryable, id: string): Promise<void> {
  await q.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1 AND state = 'pending'`, [id]);
}

export interface DeliveryListRow extends DeliveryRow {
  event_id: string;
  event_type: string;
}

export async function listDeliveries(
  q: Queryable,
  endpointId: string,
  before: { created_at: Date; id: string } | null,
  limit: number,
  deliveryId: string | null = null,
): Promise<DeliveryListRow[]> {
  return allRows<DeliveryListRow>(
    q,
    `SELECT d.*, e.id AS event_id, e.type AS event_type FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq
     WHERE d.endpoint_id = $1 AND ($2::timestamptz IS NULL OR (d.created_at, d.id) < ($2, $3::uuid))
       AND ($5::uuid IS NULL OR d.id = $5)
     ORDER BY d.created_at DESC, d.id DESC LIMIT $4`,
    [endpointId, before?.created_at ?? null, before?.id ?? null, limit, deliveryId],
  );
}

export interface AttemptRow {
  at: Date;
  manual: boolean;
  status: number | null;
  latency_ms: number;
  answer_excerpt: string | null;
  error: string | null;
}

export async function attemptsOf(q: Queryable, deliveryId: string): Promise<AttemptRow[]> {
  return allRows<AttemptRow>(
    q,
    `SELECT at, manual, status, latency_ms, answer_excerpt, error FROM webhook_attempts WHERE delivery_id = $1 ORDER BY id`,
    [deliveryId],
  );
}
