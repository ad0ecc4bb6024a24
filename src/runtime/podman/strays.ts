import { readdir, readFile } from "node:fs/promises";

/** A conmon or runc process of this host and the container it serves, read from /proc. */
export interface OciProcess {
  pid: number;
  kind: "conmon" | "runc";
  containerId: string;
  /** the container's name (conmon's `-n`); runc does not carry it */
  name: string | null;
}

const ID = /^[0-9a-f]{64}$/;
const ID_IN_PATH = /\/overlay-containers\/([0-9a-f]{64})\//;

function parse(pid: number, argv: string[]): OciProcess | null {
  const bin = (argv[0] ?? "").split("/").pop();
  if (bin === "conmon") {
    const at = argv.indexOf("-c");
    const id = at >= 0 ? argv[at + 1] : undefined;
    if (!id || !ID.test(id)) return null;
    const n = argv.indexOf("-n");
    return { pid, kind: "conmon", containerId: id, name: n >= 0 ? (argv[n + 1] ?? null) : null };
  }
  if (bin === "runc") {
    // `runc … create|start|kill|delete … <id>`, or the id inside its --log / --bundle paths
    const id = [...argv].reverse().find((a) => ID.test(a)) ?? argv.map((a) => ID_IN_PATH.exec(a)?.[1]).find(Boolean);
    return id ? { pid, kind: "runc", containerId: id, name: null } : null;
  }
  return null;
}

/** Every conmon and runc process now running (a process that ends while being read is skipped). */
export async function ociProcesses(): Promise<OciProcess[]> {
  const out: OciProcess[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const text = await readFile(`/proc/${entry}/cmdline`, "latin1").catch(() => "");
    if (!text.includes("conmon") && !text.includes("runc")) continue;
    const p = parse(Number(entry), text.split("\0").filter(Boolean));
    if (p) out.push(p);
  }
  return out;
}

/** SIGKILL to each process (one already gone is fine); returns how many were signalled. */
export function killAll(procs: OciProcess[]): number {
  let n = 0;
  for (const p of procs) {
    try {
      process.kill(p.pid, "SIGKILL");
      n++;
    } catch {
      // gone already
    }
  }
  return n;
}
