import { createHash } from "node:crypto";
import os from "node:os";
import path from "node:path";

export type NodeName = "a" | "b";

/**
 * Where everything of one instance lives. Two data directories (nodes a and b) exist because
 * a standby is a second server: the primary is whichever the record names, and a switchover
 * only swaps that name (plus ports), never moves files.
 */
export class InstanceLayout {
  readonly instanceDir: string;
  readonly backupRoot: string;

  constructor(
    readonly root: string,
    readonly id: string,
  ) {
    this.instanceDir = path.join(root, "instances", id);
    this.backupRoot = path.join(root, "backups", id);
  }

  get recordFile(): string {
    return path.join(this.instanceDir, "instance.json");
  }
  get secretsFile(): string {
    return path.join(this.instanceDir, "secrets.json");
  }
  get nodesDir(): string {
    return path.join(this.instanceDir, "nodes");
  }
  nodeDir(node: NodeName): string {
    return path.join(this.nodesDir, node);
  }
  logFile(node: NodeName): string {
    return path.join(this.instanceDir, "log", `${node}.log`);
  }
  get tlsDir(): string {
    return path.join(this.instanceDir, "tls");
  }
  get certFile(): string {
    return path.join(this.tlsDir, "server.crt");
  }
  get keyFile(): string {
    return path.join(this.tlsDir, "server.key");
  }
  get poolDir(): string {
    return path.join(this.instanceDir, "pool");
  }
  get walArchive(): string {
    return path.join(this.backupRoot, "wal");
  }
  get baseBackups(): string {
    return path.join(this.backupRoot, "base");
  }

  /**
   * Unix sockets of both nodes (names differ by port). Socket paths are limited to ~107 bytes,
   * so a long data root falls back to a short per-instance directory under the temp dir.
   */
  get socketDir(): string {
    const preferred = path.join(this.instanceDir, "run");
    if (preferred.length + "/.s.PGSQL.65535.lock".length <= 100) return preferred;
    const tag = createHash("sha256").update(this.instanceDir).digest("hex").slice(0, 16);
    return path.join(os.tmpdir(), `pgp-${tag}`);
  }
}

export function otherNode(node: NodeName): NodeName {
  return node === "a" ? "b" : "a";
}
