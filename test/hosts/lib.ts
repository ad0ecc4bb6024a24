/**
 * Helpers for tests that run real platform processes: spawning and stopping them, calling their API,
 * waiting for a condition, and a throwaway Redis.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { freePort } from "../../src/pgserver/cluster.js";

export interface Proc {
  name: string;
  base: string;
  env: Record<string, string>;
  child: ChildProcess;
  log: () => string;
}

export function launch(name: string, env: Record<string, string>): Proc {
  // node itself, not a wrapper, so SIGKILL and SIGSTOP hit the platform process
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    // REGISTRY_PORT, EDGE_PORT and S3_PORT 0: processes on one machine must not fight over the default ports (a port
    // in use stops start-up)
    // EDGE_PROCESS inline: these processes are about hosts and commands, not a forked edge (test/edge/process)
    env: {
      PATH: process.env.PATH!,
      LOG_LEVEL: "warn",
      REGISTRY_PORT: "0",
      EDGE_PORT: "0",
      S3_PORT: "0",
      EDGE_PROCESS: "inline",
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr!.on("data", (d) => (err = (err + d).slice(-4000)));
  return { name, base: `http://127.0.0.1:${env.PORT}`, env, child, log: () => err };
}

export async function kill(p: Proc, signal: NodeJS.Signals): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise((r) => p.child.once("exit", r));
  p.child.kill(signal);
  const force = setTimeout(() => p.child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(force);
}

export async function api(
  p: Proc,
  method: string,
  url: string,
  token?: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any; ms: number; headers: Headers }> {
  const started = Date.now();
  const res = await fetch(p.base + url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json().catch(() => null);
  return { status: res.status, json, ms: Date.now() - started, headers: res.headers };
}

export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 120_000,
  stepMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error(`timed out waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ""}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

export async function startRedis(): Promise<{ url: string; stop: () => Promise<void> } | null> {
  if (spawnSync("sh", ["-c", "command -v redis-server"]).status !== 0) return null;
  const port = await freePort();
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  await until(
    "redis",
    async () => {
      const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      r.on("error", () => {});
      try {
        await r.connect();
        return (await r.ping()) === "PONG" ? true : undefined;
      } finally {
        r.disconnect();
      }
    },
    15_000,
  );
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    },
  };
}
