import { execFileSync } from "node:child_process";
import { PodmanRuntime } from "../../src/runtime/podman/runtime.js";
import type { ContainerSpec } from "../../src/runtime/provider.js";

/** A prefix naming everything one test process creates, so cleanup finds it all and nothing else. */
export const PREFIX = `rtt${process.pid}`;
export const LABEL = { "platform-test": PREFIX };

export const runtime = new PodmanRuntime();

export function spec(name: string, image: string, extra: Partial<ContainerSpec> = {}): ContainerSpec {
  return {
    name: `${PREFIX}-${name}`,
    image,
    env: {},
    limits: { cpus: 0.5, memoryMb: 64, pids: 64 },
    network: null,
    mounts: [],
    labels: { ...LABEL },
    ...extra,
  };
}

/** Removes every container labelled by this process, then the networks named with its prefix. */
export async function cleanup(): Promise<void> {
  for (const c of await runtime.list(LABEL)) await runtime.remove(c.name);
  const nets = execFileSync("podman", ["network", "ls", "--format", "{{.Name}}"], { encoding: "utf8" })
    .split("\n")
    .filter((n) => n.startsWith(`${PREFIX}-`));
  for (const n of nets) await runtime.removeNetwork(n);
}

export async function waitFor<T>(what: string, fn: () => Promise<T | null | false>, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const podman = (...args: string[]) => execFileSync("podman", args, { encoding: "utf8" });
