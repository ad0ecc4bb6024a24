import type { ChildProcess } from "node:child_process";
import { ConfigError } from "../config/config.js";

/**
 * What readiness (GET /v1/health/ready, src/meta/health.ts) says of one component this process runs:
 * `up`, `down` (it should run and does not: readiness fails) or `off` (not run here, or not configured).
 * `detail` says why, for the operator only.
 */
export interface ComponentStatus {
  status: "up" | "down" | "off";
  detail: string | null;
}

export const up = (detail: string | null = null): ComponentStatus => ({ status: "up", detail });
export const down = (detail: string): ComponentStatus => ({ status: "down", detail });
export const off = (detail: string | null = null): ComponentStatus => ({ status: "off", detail });

/**
 * The waits between restarts of a supervised child (the forked edge, the registry): 1 s doubling to 60 s, back
 * to 1 s once a run lasted STABLE_MS. A component that cannot start (a port taken) is tried once a minute, not
 * once a second, and shows `down` in readiness meanwhile.
 */
export class RestartBackoff {
  static readonly FIRST_MS = 1000;
  static readonly MAX_MS = 60_000;
  static readonly STABLE_MS = 60_000;
  private nextMs = RestartBackoff.FIRST_MS;
  private startedAt = 0;

  /** a run begins */
  started(): void {
    this.startedAt = Date.now();
  }

  /** the wait before the next start, after a run ended (or a start failed) */
  next(): number {
    if (this.startedAt && Date.now() - this.startedAt >= RestartBackoff.STABLE_MS)
      this.nextMs = RestartBackoff.FIRST_MS;
    const wait = this.nextMs;
    this.nextMs = Math.min(wait * 2, RestartBackoff.MAX_MS);
    this.startedAt = 0;
    return wait;
  }
}

/**
 * Stops a supervised child: `signal` asks it to stop (its own drain), SIGKILL follows if it outstays `graceMs`;
 * resolves once it exited (at once when it is gone already).
 */
export async function stopChild(child: ChildProcess | null, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(signal);
  const force = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(force);
}

/**
 * A listener that cannot bind is a configuration error naming the variable to set (exit 2 from main.ts), not a
 * crash to restart: "configuration error: EDGE_TLS_PORT 8443 is in use: set EDGE_TLS_PORT to a free port or off".
 */
export function bindError(variable: string, port: number, err: unknown, canBeOff = false): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const instead = `set ${variable} to a free port${canBeOff ? " or off" : ""}`;
  if (code === "EADDRINUSE") return new ConfigError(variable, `${port} is in use: ${instead}`);
  if (code === "EACCES") return new ConfigError(variable, `${port} needs privileges this process lacks: ${instead}`);
  return err;
}

/** a check that does not answer within `ms` is down (a store that hangs must not hang readiness) */
export async function within(
  ms: number,
  what: string,
  check: () => Promise<ComponentStatus>,
): Promise<ComponentStatus> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ComponentStatus>((resolve) => {
    timer = setTimeout(() => resolve(down(`${what} did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([check().catch((err: Error) => down(`${what}: ${err.message}`)), late]);
  } finally {
    clearTimeout(timer);
  }
}
