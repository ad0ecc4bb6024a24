/** The baseline of bench/db.ts: the same PostgreSQL binary created and started without the platform. */
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pgBinaries } from "../../src/pgserver/binaries.js";
import {
  freePort,
  initCluster,
  startCluster,
  stopCluster,
  writePlatformConf,
  type Cluster,
} from "../../src/pgserver/cluster.js";
import type { RunAs } from "../../src/pgserver/system-user.js";

let bareSeq = 0;

/** initdb (the platform's options: checksums, scram, --no-sync) + pg_ctl start -w of the same binary; milliseconds. */
export async function bareCreate(root: string, major: number, runAs: RunAs | null): Promise<number> {
  const dir = path.join(root, "bare", String(bareSeq++));
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const cluster: Cluster = {
    bins: pgBinaries(major),
    dataDir: path.join(dir, "data"),
    logFile: path.join(dir, "log", "server.log"),
    runAs,
  };
  const port = await freePort();
  const t0 = performance.now();
  await initCluster(cluster, { superuser: "postgres", password: "bench-password" });
  await writePlatformConf(cluster, {
    port,
    listen_addresses: "127.0.0.1",
    unix_socket_directories: "",
    shared_buffers: "32MB",
    max_connections: 25,
  });
  await startCluster(cluster, 60);
  const took = performance.now() - t0;
  await stopCluster(cluster, "immediate");
  await rm(dir, { recursive: true, force: true });
  return took;
}
