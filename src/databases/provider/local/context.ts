import path from "node:path";
import type pg from "pg";
import { pgBinaries } from "../../../pgserver/binaries.js";
import { isRunning, writePlatformConf, type Cluster } from "../../../pgserver/cluster.js";
import type { RunAs } from "../../../pgserver/system-user.js";
import { ProviderError, type Endpoint } from "../types.js";
import { withAdmin, type AdminTarget } from "./admin.js";
import { waitFor, writeOwnedFile } from "./exec.js";
import { renderServerHba } from "./hba.js";
import { otherNode, type InstanceLayout, type NodeName } from "./layout.js";
import {
  CUSTOMER_SUPERUSER,
  REPLICATION_ROLE,
  saveRecord,
  type InstanceRecord,
  type InstanceSecrets,
} from "./record.js";
import { nodeSettings, type NodeRole } from "./settings.js";

export interface ProviderEnv {
  runAs: RunAs | null;
  alwaysAllowed: string[];
  /** PgBouncer binary as configured; null/undefined means: detect it. */
  pgbouncerPath?: string | null;
}

/** One instance as the operations see it: its record, secrets, paths and the two possible servers. */
export class InstanceContext {
  constructor(
    readonly layout: InstanceLayout,
    public record: InstanceRecord,
    readonly secrets: InstanceSecrets,
    readonly env: ProviderEnv,
  ) {}

  get runAs(): RunAs | null {
    return this.env.runAs;
  }

  cluster(node: NodeName): Cluster {
    return {
      bins: pgBinaries(this.record.version),
      dataDir: this.layout.nodeDir(node),
      logFile: this.layout.logFile(node),
      runAs: this.env.runAs,
    };
  }

  get primaryNode(): NodeName {
    return this.record.primaryNode;
  }
  get primary(): Cluster {
    return this.cluster(this.record.primaryNode);
  }

  nodePort(node: NodeName): number {
    if (node === this.record.primaryNode) return this.record.port;
    if (this.record.standby?.node === node) return this.record.standby.port;
    throw new Error(`node ${node} of ${this.record.id} has no role`);
  }

  adminTarget(node: NodeName = this.record.primaryNode, database?: string): AdminTarget {
    return {
      socketDir: this.layout.socketDir,
      port: this.nodePort(node),
      password: this.secrets.adminPassword,
      database,
    };
  }

  withPrimary<T>(fn: (c: pg.Client) => Promise<T>, database?: string): Promise<T> {
    return withAdmin(this.adminTarget(this.record.primaryNode, database), fn);
  }

  async requireRunning(): Promise<void> {
    if (!(await isRunning(this.primary))) {
      throw new ProviderError("not_running", `database ${this.record.id} is not running`);
    }
  }

  async save(): Promise<void> {
    await saveRecord(this.layout, this.record);
  }

  endpoint(port = this.record.port): Endpoint {
    return {
      host: this.record.host,
      port,
      database: this.record.database,
      user: this.record.user,
      superuser: CUSTOMER_SUPERUSER,
      sslmode: "require",
    };
  }

  /** How a standby on this host reaches the primary's front port. */
  primaryConninfo(): string {
    return [
      "host=127.0.0.1",
      `port=${this.record.port}`,
      `user=${REPLICATION_ROLE}`,
      `password=${this.secrets.replicationPassword}`,
      "application_name=standby",
      "sslmode=prefer",
    ].join(" ");
  }

  roleOf(node: NodeName): NodeRole {
    return node === this.record.primaryNode
      ? { kind: "primary" }
      : { kind: "standby", primaryConninfo: this.primaryConninfo() };
  }

  /** Rewrites platform.conf and pg_hba.conf of a node from the record; a reload or restart applies them. */
  async writeNodeConfig(node: NodeName, role: NodeRole = this.roleOf(node), port = this.nodePort(node)): Promise<void> {
    const cluster = this.cluster(node);
    await writePlatformConf(
      cluster,
      nodeSettings({
        port,
        size: this.record.size,
        socketDir: this.layout.socketDir,
        certFile: this.layout.certFile,
        keyFile: this.layout.keyFile,
        walArchive: this.layout.walArchive,
        readOnly: this.record.readOnlyReason !== null,
        role,
      }),
    );
    await writeOwnedFile(
      path.join(cluster.dataDir, "pg_hba.conf"),
      renderServerHba(this.record.allowlist, this.env.alwaysAllowed),
      this.env.runAs,
    );
  }

  /**
   * Re-reads config and hba, and returns only once the postmaster has done so: a fresh session then
   * reports a newer pg_conf_load_time(). Open sessions have been signalled by then and apply the change
   * before their next statement.
   */
  async reload(node: NodeName): Promise<void> {
    if (!(await isRunning(this.cluster(node)))) return;
    const loadTime = () =>
      withAdmin(this.adminTarget(node), (c) => c.query<{ t: string }>("SELECT pg_conf_load_time()::text AS t")).then(
        (r) => r.rows[0].t,
      );
    const before = await loadTime();
    await withAdmin(this.adminTarget(node), (c) => c.query("SELECT pg_reload_conf()"));
    await waitFor(
      async () => ((await loadTime()) !== before ? true : undefined),
      15_000,
      () => new Error(`server ${this.record.id}/${node} did not reload its configuration`),
      20,
    );
  }

  standbyNode(): NodeName | null {
    return this.record.standby?.node ?? null;
  }

  spareNode(): NodeName {
    return otherNode(this.record.primaryNode);
  }
}
