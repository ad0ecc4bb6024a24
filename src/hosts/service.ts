import { randomUUID } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { FastifyBaseLogger } from "fastify";
import { ConfigError, int } from "../config/config.js";
import { ApiError } from "../http/errors.js";
import { HOST_ROLES, type HostIdentity, type HostRole, type Hosts, type PlacementRequest } from "./contract.js";
import type { ExternalHosts } from "../orgs/contract.js";
import type { Db, Queryable } from "../store/db.js";
import * as repo from "./repo.js";
import { sessionLock } from "../store/locks.js";

export interface HostsConfig {
  /** HOST_NAME: shown to operators; default the machine's host name */
  name: string;
  /** ROLES: comma list of api, worker, edge, s3; default all */
  roles: HostRole[];
  /** HOST_HEARTBEAT_SECONDS: how often the host says it is alive */
  heartbeatSeconds: number;
  /** HOST_MISSED_BEATS: a host without a heartbeat for this many intervals is unavailable */
  missedBeats: number;
}

type Env = Record<string, string | undefined>;

export function hostsConfig(env: Env): HostsConfig {
  const name = env.HOST_NAME || os.hostname();
  if (!/^[\w.-]{1,100}$/.test(name))
    throw new ConfigError("HOST_NAME", `must be 1-100 letters, digits, dots, hyphens or underscores, got "${name}"`);
  let roles: HostRole[] = [...HOST_ROLES];
  if (env.ROLES !== undefined && env.ROLES.trim() !== "") {
    const listed = env.ROLES.split(",")
      .map((r) => r.trim())
      .filter(Boolean);
    const unknown = listed.filter((r) => !(HOST_ROLES as readonly string[]).includes(r));
    if (unknown.length || !listed.length)
      throw new ConfigError("ROLES", `must be a comma list of ${HOST_ROLES.join(", ")}, got "${env.ROLES}"`);
    roles = HOST_ROLES.filter((r) => listed.includes(r));
  }
  return {
    name,
    roles,
    heartbeatSeconds: int(env, "HOST_HEARTBEAT_SECONDS", 5, 1, 300),
    missedBeats: int(env, "HOST_MISSED_BEATS", 3, 1, 100),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The host's id, created at first start in DATA_DIR/host-id: a restarted process on the same machine is the same host. */
export async function loadHostId(dataDir: string): Promise<string> {
  const file = path.join(dataDir, "host-id");
  for (;;) {
    try {
      const id = (await readFile(file, "utf8")).trim();
      if (!UUID.test(id))
        throw new Error(`${file} does not hold a host id; remove it to register this machine as a new host`);
      return id;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    await mkdir(dataDir, { recursive: true });
    try {
      await writeFile(file, randomUUID() + "\n", { flag: "wx", mode: 0o644 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err; // another process of this host wrote it first: read theirs
    }
  }
}

/**
 * This process's host: registered at setup, heartbeat every HOST_HEARTBEAT_SECONDS, and from start a
 * process lease: a session advisory lock on `process:<id>`, held on a connection of its own. The lock
 * dies with the process (kill -9 closes its connections), so others know at once that it is gone.
 */
export class HostRegistry implements Hosts {
  private lease: { id: string; client: pg.Client | null } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private db: Db,
    private databaseUrl: string,
    private log: FastifyBaseLogger,
    readonly local: HostIdentity,
    readonly config: HostsConfig,
    /** organization external hosts (kernel.use("externalHosts")), asked when a placement names a host */
    private readonly external: () => ExternalHosts | null = () => null,
  ) {}

  async register(capacity: Record<string, unknown>): Promise<void> {
    await repo.upsertHost(this.db, { ...this.local, capacity, heartbeatSeconds: this.config.heartbeatSeconds });
    this.timer = setInterval(() => {
      repo
        .heartbeat(this.db, this.local.id, this.lease?.id ?? null)
        .catch((err) => this.log.warn({ err }, "host heartbeat failed"));
    }, this.config.heartbeatSeconds * 1000);
    this.timer.unref();
  }

  /** Takes the process lease (at start). */
  async startLease(): Promise<void> {
    const id = randomUUID();
    await repo.insertProcess(this.db, { id, hostId: this.local.id, pid: process.pid, roles: this.local.roles });
    this.lease = { id, client: null };
    await this.holdLock(id);
  }

  private async holdLock(id: string): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on("error", (err) => {
      const lease = this.lease;
      if (this.stopped || !lease || lease.client !== client) return;
      // while the lock is gone this process looks dead to the others: take it again soon
      this.log.error({ err }, "process lease connection lost; taking the lease again");
      lease.client = null;
      setTimeout(
        () => void this.holdLock(id).catch((e) => this.log.error({ err: e }, "process lease not taken again")),
        1000,
      ).unref();
    });
    await client.connect();
    await sessionLock(client, `process:${id}`);
    if (this.stopped || this.lease?.id !== id) {
      await client.end().catch(() => {});
      return;
    }
    this.lease.client = client;
  }

  leaseId(): string | null {
    return this.lease?.client ? this.lease.id : null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const lease = this.lease;
    this.lease = null;
    if (!lease) return;
    await repo.stopProcess(this.db, lease.id).catch(() => {});
    await lease.client?.end().catch(() => {});
  }

  async place(q: Queryable, request: PlacementRequest): Promise<string> {
    // an organization's own machine, asked for by id or labels (src/orgs/hosts); later: GPU hosts, capacity
    if (request.hostId !== undefined || request.hostLabels !== undefined) {
      const external = this.external();
      if (!external) throw new ApiError("not_found", "No such host for this owner.");
      return external.place(q, request);
    }
    if (this.local.roles.includes("worker")) return this.local.id;
    const id = await repo.pickAvailable(q, "worker", this.config.missedBeats);
    if (!id)
      throw new ApiError(
        "host_unavailable",
        `No host that can hold a ${request.kind} is available; try again shortly.`,
      );
    return id;
  }

  async available(q: Queryable, hostId: string): Promise<boolean> {
    return repo.isAvailable(q, hostId, this.config.missedBeats);
  }

  /** Every host with its live processes, for operators. */
  async list(q: Queryable) {
    const [hosts, processes] = await Promise.all([
      repo.listHosts(q, this.config.missedBeats),
      repo.listProcesses(q, this.config.missedBeats),
    ]);
    return hosts.map((h) => ({
      ...h,
      local: h.id === this.local.id,
      processes: processes.filter((p) => p.host_id === h.id),
    }));
  }
}

/** What the host offers, as recorded for placement (capacity-aware placement reads it later). */
export function hostCapacity(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { cpus: os.cpus().length, memory_bytes: os.totalmem(), ...extra };
}
