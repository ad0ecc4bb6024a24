import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Db, Queryable } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import type { OrgMembership } from "../public.js";
import type { ExternalHosts } from "../public.js";
import type { PlacementRequest } from "../../hosts/contract.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError, authRequired, notFound } from "../../http/errors.js";
import type { AgentFeed } from "../../apps/public.js";
import type { DesiredState, RegisterRequest, RegisterResponse, ReportRequest } from "../../agent/protocol.js";
import type { DesiredHub } from "./hub.js";
import { installShell, type OrgHostsConfig } from "./install.js";
import * as repo from "./repo.js";

export interface OrgHostsDeps {
  db: Db;
  feed: AgentFeed;
  hub: DesiredHub;
  config: OrgHostsConfig;
}

/** One host as GET shows it: the row plus its pods. */
export interface OrgHost extends repo.OrgHostRow {
  pods: number;
  activePods: number;
}

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest();
/** Prefixed so a leaked secret is recognisable: hbt_ bootstrap (one use), hac_ agent credential. */
const secret = (prefix: string) => `${prefix}${randomBytes(32).toString("base64url")}`;

export function orgHostsService(deps: OrgHostsDeps) {
  const { db, feed, hub, config } = deps;
  const missed = config.missedBeats;

  async function withPods(rows: repo.OrgHostRow[]): Promise<OrgHost[]> {
    const counts = await feed.counts(rows.map((r) => r.id));
    return rows.map((r) => ({ ...r, pods: counts.get(r.id)?.live ?? 0, activePods: counts.get(r.id)?.active ?? 0 }));
  }

  async function found(q: Queryable, org: OrgMembership, id: string, forUpdate = false) {
    const host = await repo.findHost(q, org.orgId, id, missed, { forUpdate });
    if (!host) throw notFound("host");
    return host;
  }

  const bootstrap = () => {
    const token = secret("hbt_");
    return { token, hash: sha256(token), expiresAt: new Date(Date.now() + config.bootstrapTtlSeconds * 1000) };
  };

  const issued = (host: OrgHost, b: { token: string; expiresAt: Date }) => ({
    host,
    bootstrap: { token: b.token, expires_at: b.expiresAt },
    install: { shell: installShell(config, host, b.token) },
  });

  /** POST /v1/org/hosts: a pending host, its one-time bootstrap token and the install command. */
  async function create(p: Principal, org: OrgMembership, body: { name: string; region?: string | null }) {
    const id = randomUUID();
    const b = bootstrap();
    // the bootstrap token is part of the transaction's result: a retry of its Idempotency-Key after a crash answers
    // this host with the token its stored hash matches (http/idempotent-change.ts)
    const made = await auditedTransaction(db, p, async (tx) => {
      await repo.insertHost(tx, {
        id,
        orgId: org.orgId,
        name: body.name,
        region: body.region ?? null,
        createdBy: p.accountId,
        bootstrapHash: b.hash,
        expiresAt: b.expiresAt,
        heartbeatSeconds: config.heartbeatSeconds,
      });
      return { host: (await repo.findHost(tx, org.orgId, id, missed))!, b };
    });
    return issued({ ...made.host, pods: 0, activePods: 0 }, made.b);
  }

  /** POST /v1/org/hosts/{id}/bootstrap: a new token for a pending host (the old one stops working); 409 once registered. */
  async function reissue(p: Principal, org: OrgMembership, id: string) {
    const b = bootstrap();
    const host = await auditedTransaction(db, p, async (tx) => {
      const cur = await found(tx, org, id, true);
      if (cur.registered_at)
        throw new ApiError("conflict", "The host has registered; a bootstrap token is only for a pending host.");
      await repo.setBootstrap(tx, cur.id, b.hash, b.expiresAt);
      return (await repo.findHost(tx, org.orgId, id, missed))!;
    });
    return issued((await withPods([host]))[0]!, b);
  }

  const list = async (org: OrgMembership) => withPods(await repo.listHosts(db, org.orgId, missed));
  const get = async (org: OrgMembership, id: string) => (await withPods([await found(db, org, id)]))[0]!;

  /** DELETE: 409 host_in_use while a pod is placed there (not deleted); the credential goes with the row. */
  async function remove(p: Principal, org: OrgMembership, id: string): Promise<void> {
    await auditedTransaction(db, p, async (tx) => {
      const host = await found(tx, org, id, true);
      const counts = (await feed.counts([host.id])).get(host.id);
      if (counts?.live)
        throw new ApiError(
          "host_in_use",
          `${counts.live} pod(s) are placed on the host (${counts.active} meant to run); delete them first.`,
        );
      await repo.deleteHost(tx, host.id);
    });
    hub.wake(id); // a waiting poll answers now: 401 at its next call, the agent stops
  }

  /** Placement of a company pod on one of its organization's hosts (kernel.use("externalHosts")). */
  async function place(q: Queryable, req: PlacementRequest): Promise<string> {
    const owner = req.owner;
    if (!owner || owner.kind !== "org") throw notFound("host");
    const unavailable = (what: string) => new ApiError("host_unavailable", what);
    if (req.hostId !== undefined) {
      const host = await repo.findHost(q, owner.id, req.hostId, missed);
      if (!host) throw notFound("host");
      if (host.status !== "online")
        throw unavailable(`The host ${host.name} is ${host.status}; a pod is placed only on an online host.`);
      if (req.gpu && host.gpu_slots < 1)
        throw new ApiError("provision_failed", `The host ${host.name} has no GPU slot for this size.`);
      return host.id;
    }
    const want = Object.entries(req.hostLabels ?? {});
    const fits = (await repo.listHosts(q, owner.id, missed)).filter((h) => {
      const labels: Record<string, string | null> = { ...h.labels, name: h.name, region: h.region };
      return h.status === "online" && (!req.gpu || h.gpu_slots > 0) && want.every(([k, v]) => labels[k] === v);
    });
    if (!fits.length) throw unavailable("No online host of the organization carries all of host_labels.");
    // fewest pods first, so a selector spreads pods over the matching machines
    const counts = await feed.counts(fits.map((h) => h.id));
    fits.sort((a, b) => (counts.get(a.id)?.live ?? 0) - (counts.get(b.id)?.live ?? 0));
    return fits[0]!.id;
  }

  const external: ExternalHosts = { place, isExternal: (q, hostId) => repo.isOrgHost(q, hostId) };

  // ---- the agent's side: public routes authenticated by the bootstrap token, then by the agent credential ----

  async function register(token: string | null, body: RegisterRequest): Promise<RegisterResponse> {
    if (!token) throw authRequired("Registration takes the bootstrap token as the bearer.");
    const credential = secret("hac_");
    const host = await repo.consumeBootstrap(db, sha256(token), {
      credentialHash: sha256(credential),
      machineName: body.machine_name,
      agentVersion: body.agent_version,
      gpuSlots: body.gpu_slots,
      capacity: body.capacity,
      labels: body.labels,
      heartbeatSeconds: config.heartbeatSeconds,
    });
    if (!host) throw authRequired("The bootstrap token is unknown, used or expired; ask an admin for a new one.");
    return { host_id: host.id, credential, heartbeat_seconds: config.heartbeatSeconds };
  }

  /** The host behind an agent credential, counting the call as a heartbeat. */
  async function agentHost(credential: string | null): Promise<repo.OrgHostRow> {
    const host = credential ? await repo.hostByCredential(db, sha256(credential), missed) : null;
    if (!host) throw authRequired("The agent credential is unknown or its host was deleted.");
    await repo.beat(db, host.id, missed);
    return host;
  }

  /** GET /v1/agent/desired: answers at once when `version` is not the current one, else waits up to `waitS`. */
  async function desired(host: repo.OrgHostRow, version: string | undefined, waitS: number): Promise<DesiredState> {
    const deadline = Date.now() + waitS * 1000;
    for (;;) {
      // listening before the read, and the notifications counted across it: a change made meanwhile is not missed
      await hub.ready();
      const mark = hub.mark(host.id);
      const now = await feed.desired(host.id);
      const left = deadline - Date.now();
      if (now.version !== version || left <= 0 || hub.closed || !(await repo.isOrgHost(db, host.id)))
        return { ...now, heartbeat_seconds: host.heartbeat_seconds };
      await hub.wait(host.id, left, mark);
      if (Date.now() < deadline) await repo.beat(db, host.id, missed); // a long wait is a sign of life too
    }
  }

  async function report(host: repo.OrgHostRow, body: ReportRequest): Promise<{ version: string }> {
    await feed.report(host.id, body.pods);
    return { version: (await feed.desired(host.id)).version };
  }

  /** The monitor (every heartbeat interval on worker processes): pods of hosts gone quiet become unknown. */
  async function markOffline(): Promise<number> {
    let n = 0;
    for (const h of await repo.offlineHosts(db, missed))
      n += await feed.markUnknown(
        h.id,
        `host ${h.name} is offline (no heartbeat for ${config.heartbeatSeconds * missed} s); the pod's state is not known`,
      );
    return n;
  }

  return { create, reissue, list, get, remove, external, register, agentHost, desired, report, markOffline };
}

export type OrgHostsService = ReturnType<typeof orgHostsService>;
