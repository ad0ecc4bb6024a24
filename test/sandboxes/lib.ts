import { execFileSync } from "node:child_process";
import { call, type TestApp } from "../helpers/app.js";
import type { SandboxesState } from "../../src/sandboxes/module.js";
import { reap } from "../../src/sandboxes/jobs.js";
import { createRuntime, ownerNetworkName } from "../../src/runtime/index.js";
import type { Owner } from "../../src/kernel/owner.js";

export const sandboxes = (t: TestApp) => t.platform.state<SandboxesState>("sandboxes");
export const hostId = (t: TestApp) => t.platform.kernel.require("hosts").local.id;

/** Runs the reaper of the test app's host now (the job the cron and each sandbox's expiry queue). */
export const reapNow = (t: TestApp) =>
  reap({ db: t.db, runtime: sandboxes(t).runtime, hostId: hostId(t), log: t.platform.log });

export const podman = (...args: string[]) => execFileSync("podman", args, { encoding: "utf8" });

/** Whether the sandbox's container exists, as podman itself says. */
export const containerExists = (id: string) =>
  podman("ps", "--all", "--filter", `name=^sbx-${id}$`, "--format", "{{.Names}}").trim() === `sbx-${id}`;
export const networkExists = (name: string) =>
  podman("network", "ls", "--filter", `name=^${name}$`, "--format", "{{.Name}}").trim() === name;

/** Removes every container the test app's host ran for sandboxes, and the networks of their owners. */
export async function cleanupSandboxes(db: TestApp["db"], host: string): Promise<void> {
  const runtime = createRuntime({});
  for (const c of await runtime.list({ "platform.kind": "sandbox", "platform.host": host }))
    await runtime.remove(c.name);
  const { rows } = await db.query<Owner>(
    "SELECT DISTINCT owner_kind AS kind, owner_id AS id FROM sandboxes WHERE host_id = $1 AND network",
    [host],
  );
  for (const owner of rows) await runtime.removeNetwork(ownerNetworkName(owner));
}

export async function waitFor<T>(what: string, fn: () => Promise<T | null | false>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const post = (t: TestApp, token: string, url: string, body: unknown = {}) =>
  call(t.app, { method: "POST", url, token, body });

export const exec = (t: TestApp, token: string, id: string, command: string[], timeout_s?: number) =>
  post(t, token, `/v1/sandboxes/${id}/exec`, timeout_s ? { command, timeout_s } : { command });
