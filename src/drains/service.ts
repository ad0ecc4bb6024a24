import { createHmac, randomUUID } from "node:crypto";
import { isUuid, type Db, type Queryable } from "../store/db.js";
import type { Principal } from "../auth/principal.js";
import type { Kernel } from "../kernel/kernel.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError } from "../http/errors.js";
import type { SecretBox } from "../kernel/secrets.js";
import type { Outbound } from "../net/outbound.js";
import { refusedAs400 } from "../http/outbound-refusal.js";
import { checkDestination, destinationHref } from "./destination.js";
import * as repo from "./repo.js";

/** Vercel allows a few drains per project, Render one per service; 16 per owner (as webhook endpoints) is plenty. */
export const MAX_DRAINS = 16;

export interface DrainInput {
  name?: string;
  destination?: string;
  headers?: Record<string, string>;
  source?: "pods" | "edge";
  app?: string | null;
  enabled?: boolean;
}

/** HMAC-SHA256 under a key derived from the platform key: tells values apart, cannot be guessed offline. */
const fingerprint = (box: SecretBox, value: string): string =>
  "hmac-sha256:" +
  createHmac("sha256", box.derive("drain-header-fingerprint")).update(value).digest("hex").slice(0, 32);

export const drainView = (d: repo.DrainRow) => ({
  id: d.id,
  name: d.name,
  destination: d.destination,
  headers: d.headers_meta,
  source: d.source,
  app: d.target_id ? { kind: d.target_kind!, id: d.target_id } : null,
  enabled: d.enabled,
  state: {
    status: !d.enabled ? "disabled" : d.failures_in_row > 0 ? "failing" : d.last_success_at ? "delivering" : "waiting",
    delivered_count: Number(d.delivered_count),
    dropped_count: Number(d.dropped_count),
    failed_attempts: Number(d.failed_attempts),
    last_error: d.last_error,
    last_error_at: d.last_error_at?.toISOString() ?? null,
    last_success_at: d.last_success_at?.toISOString() ?? null,
    next_attempt_at: d.failures_in_row > 0 ? (d.next_attempt_at?.toISOString() ?? null) : null,
  },
  created_at: d.created_at.toISOString(),
  updated_at: d.updated_at.toISOString(),
});

/** header names a drain may set: tokens (RFC 9110), not the ones the platform sets itself */
const RESERVED = new Set(["content-type", "content-length", "host", "user-agent", "transfer-encoding", "connection"]);

export function drainService(d: { db: Db; secrets: SecretBox; outbound: Outbound; kernel: Kernel }) {
  const checked = (raw: string) => refusedAs400("destination", () => checkDestination(d.outbound, raw));

  function sealHeaders(headers: Record<string, string>) {
    const names = Object.keys(headers);
    for (const n of names) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/.test(n) || RESERVED.has(n.toLowerCase()))
        throw new ApiError("invalid_request", `headers: ${JSON.stringify(n)} is not a header a drain may set.`);
      if (/[\r\n\0]/.test(headers[n]))
        throw new ApiError("invalid_request", `headers: the value of ${n} holds a line break.`);
    }
    if (!names.length) return { sealed: null, meta: {} };
    const meta: Record<string, { fingerprint: string }> = {};
    for (const n of names) meta[n] = { fingerprint: fingerprint(d.secrets, headers[n]) };
    return { sealed: d.secrets.seal(JSON.stringify(headers), repo.HEADERS_COLUMN), meta };
  }

  /** The app a drain narrows to: a pod or a group for pod logs; also a static site for the edge's access lines. */
  async function target(p: Principal, source: "pods" | "edge", ref: string) {
    const app = await d.kernel.findInstance("pods", p.owner, ref);
    if (app) return { kind: app.kind === "group" ? ("group" as const) : ("pod" as const), id: app.id };
    if (source === "edge") {
      const site = await d.kernel.findInstance("static", p.owner, ref);
      if (site) return { kind: "site" as const, id: site.id };
    }
    const what = source === "edge" ? "pod, pod group or static site" : "pod or pod group";
    throw new ApiError("invalid_request", `app: the caller has no ${what} ${JSON.stringify(ref)}.`);
  }

  async function drain(p: Principal, id: string, q: Queryable = d.db, lock = false) {
    const row = isUuid(id) ? await repo.getDrain(q, p.owner, id, lock) : null;
    if (!row) throw new ApiError("not_found", "No such log drain.");
    return row;
  }

  const label = (row: repo.DrainRow) => `log drain "${row.name}"`;

  return {
    async create(p: Principal, input: Required<Pick<DrainInput, "name" | "destination">> & DrainInput) {
      const dest = await checked(input.destination);
      if (dest.kind === "syslog" && input.headers && Object.keys(input.headers).length)
        throw new ApiError("invalid_request", "headers: only an https destination takes headers.");
      const headers = sealHeaders(input.headers ?? {});
      const source = input.source ?? "pods";
      const app = input.app ? await target(p, source, input.app) : null;
      return auditedTransaction(d.db, p, async (tx) => {
        if ((await repo.countDrains(tx, p.owner)) >= MAX_DRAINS)
          throw new ApiError("invalid_request", `At most ${MAX_DRAINS} log drains per owner.`);
        return repo.insertDrain(tx, {
          id: randomUUID(),
          owner_kind: p.owner.kind,
          owner_id: p.owner.id,
          account_id: p.accountId,
          name: input.name,
          destination: destinationHref(dest),
          headers_sealed: headers.sealed,
          headers_meta: headers.meta,
          source,
          target_kind: app?.kind ?? null,
          target_id: app?.id ?? null,
        });
      });
    },
    list: (p: Principal) => repo.listDrains(d.db, p.owner),
    get: (p: Principal, id: string) => drain(p, id),
    async update(p: Principal, id: string, input: DrainInput) {
      const dest = input.destination === undefined ? undefined : await checked(input.destination);
      const headers = input.headers === undefined ? undefined : sealHeaders(input.headers);
      return auditedTransaction(d.db, p, async (tx) => {
        const row = await drain(p, id, tx, true);
        await d.kernel.assertMayManage(tx, p, { label: label(row), accountId: row.account_id });
        const kind = dest?.kind ?? (row.destination.startsWith("syslog") ? "syslog" : "http");
        if (kind === "syslog" && Object.keys(headers?.meta ?? (dest ? {} : row.headers_meta)).length)
          throw new ApiError("invalid_request", "headers: only an https destination takes headers.");
        return repo.updateDrain(tx, row.id, {
          name: input.name,
          destination: dest && destinationHref(dest),
          // a syslog destination carries no headers: a move to one drops them
          headers: headers ?? (dest?.kind === "syslog" ? { sealed: null, meta: {} } : undefined),
          enabled: input.enabled,
        });
      });
    },
    async remove(p: Principal, id: string) {
      return auditedTransaction(d.db, p, async (tx) => {
        const row = await drain(p, id, tx, true);
        await d.kernel.assertMayManage(tx, p, { label: label(row), accountId: row.account_id });
        await repo.removeDrain(tx, row.id);
        return row;
      });
    },
  };
}
export type DrainService = ReturnType<typeof drainService>;
