import type { ContainerInfo, ContainerStatus } from "../provider.js";

/** The parts of `podman container inspect` the provider reads. */
export interface PodmanInspect {
  Id: string;
  Name: string;
  State: {
    Status: string;
    Running: boolean;
    ExitCode: number;
    OOMKilled?: boolean;
    Error?: string;
    StartedAt?: string;
    FinishedAt?: string;
  };
  Config?: { Labels?: Record<string, string> | null };
  HostConfig?: { Memory?: number };
  NetworkSettings?: {
    IPAddress?: string;
    Ports?: Record<string, { HostIp: string; HostPort: string }[] | null> | null;
    Networks?: Record<string, { IPAddress?: string }> | null;
  };
}

const STATUS: Record<string, ContainerStatus> = {
  created: "created",
  configured: "created",
  initialized: "created",
  running: "running",
  stopping: "running",
  exited: "exited",
  stopped: "exited",
  dead: "exited",
  removing: "removing",
};

/** podman writes "0001-01-01T00:00:00Z" for "never". */
function time(text: string | undefined): Date | null {
  if (!text || text.startsWith("0001-")) return null;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** The first published port, as 127.0.0.1:<host port>. */
export function publishedAddress(ports: NonNullable<PodmanInspect["NetworkSettings"]>["Ports"]): string | null {
  for (const bindings of Object.values(ports ?? {})) {
    const b = bindings?.find((x) => x.HostPort);
    if (b) return `${b.HostIp || "127.0.0.1"}:${b.HostPort}`;
  }
  return null;
}

export function containerInfo(i: PodmanInspect): ContainerInfo {
  const status = STATUS[i.State.Status] ?? "unknown";
  const running = status === "running";
  const networks = Object.values(i.NetworkSettings?.Networks ?? {});
  const networkAddress = networks.find((n) => n.IPAddress)?.IPAddress || i.NetworkSettings?.IPAddress || null;
  let reason: string | null = null;
  if (i.State.OOMKilled) {
    const limit = i.HostConfig?.Memory ? ` (limit ${Math.round(i.HostConfig.Memory / 1048576)} MB)` : "";
    reason = `out of memory${limit}`;
  } else if (i.State.Error) reason = i.State.Error;
  return {
    name: i.Name.replace(/^\//, ""),
    id: i.Id,
    status,
    address: running ? publishedAddress(i.NetworkSettings?.Ports) : null,
    networkAddress: networkAddress || null,
    exitCode: status === "exited" ? i.State.ExitCode : null,
    startedAt: time(i.State.StartedAt),
    finishedAt: status === "exited" ? time(i.State.FinishedAt) : null,
    labels: { ...(i.Config?.Labels ?? {}) },
    reason,
  };
}

/** podman's k8s-file timestamps drop trailing zeros of the nanoseconds; padded, they sort as text. */
function sortableTime(ts: string): string {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-].*)$/.exec(ts);
  return m ? `${m[1]}.${(m[2] ?? "").padEnd(9, "0")}${m[3]}` : ts;
}

/** Merges `podman logs --timestamps` stdout and stderr into one list in time order, timestamps removed. */
export function mergeLogs(stdout: string, stderr: string, tail: number): string[] {
  const lines: { at: string; seq: number; text: string }[] = [];
  let seq = 0;
  for (const text of [stdout, stderr]) {
    for (const line of text.split("\n")) {
      if (!line) continue;
      const space = line.indexOf(" ");
      const at = space > 0 ? line.slice(0, space) : "";
      if (!/^\d{4}-\d\d-\d\dT/.test(at)) continue; // podman's own warnings, not the container's output
      lines.push({ at: sortableTime(at), seq: seq++, text: line.slice(space + 1) });
    }
  }
  lines.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.seq - b.seq));
  return lines.slice(Math.max(0, lines.length - tail)).map((l) => l.text);
}
