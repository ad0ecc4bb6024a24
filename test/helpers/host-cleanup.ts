import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import type { Db } from "../../src/store/db.js";

const run = promisify(execFile);

/**
 * What a test platform leaves on the machine outside its database: containers labelled for its host, its
 * owners' podman networks, and loop-mounted volumes under its data directory. Closing a test app removes
 * them, so runs never pile up containers or exhaust podman's network pool. Missing podman is fine.
 */
export async function cleanupHost(db: Db, hostId: string, dataDir: string): Promise<void> {
  const ids = await run("podman", ["ps", "-aq", "--filter", `label=platform.host=${hostId}`]).then(
    (r) => r.stdout.split("\n").filter(Boolean),
    () => [] as string[],
  );
  if (ids.length) await run("podman", ["rm", "-f", "-t", "0", ...ids]).catch(() => null);
  const networks = await db
    .query<{ name: string }>("SELECT name FROM owner_networks WHERE host_id = $1", [hostId])
    .then(
      (r) => r.rows.map((n) => n.name),
      () => [] as string[],
    );
  for (const name of networks) {
    // only when no other host's container uses it (owners' networks are shared by name across test apps of one owner)
    await run("podman", ["network", "rm", name]).catch(() => null);
  }
  const mounts = await readFile("/proc/mounts", "utf8").catch(() => "");
  for (const line of mounts.split("\n")) {
    const target = line.split(" ")[1];
    if (target && target.startsWith(dataDir + "/")) await run("umount", ["-l", target]).catch(() => null);
  }
}
