/**
 * The host agent (README of src/orgs, "External hosts"): runs on an organization's own machine, started by the
 * install script (src/agent/install.sh) as `node --import tsx src/agent/main.ts`. It holds no store credentials:
 * it registers once with the bootstrap token, keeps its own credential in AGENT_STATE_DIR, long-polls the desired
 * state of the pods placed on its host, drives them with the same runtime provider as the platform's workers
 * (src/runtime, podman) and reports what runs with every heartbeat.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { createRuntime } from "../runtime/index.js";
import { PlatformClient, PlatformError } from "./client.js";
import { agentConfig, type AgentConfig } from "./config.js";
import { AgentReconciler } from "./reconciler.js";

export const AGENT_VERSION = "1";
/** exit status when the control plane refuses the agent for good (systemd: RestartPreventExitStatus) */
const REFUSED = 78;

const log = pino({ name: "platform-agent", level: process.env.LOG_LEVEL || "info" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const refused = (err: unknown) => err instanceof PlatformError && err.status === 401;

interface Credential {
  host_id: string;
  credential: string;
  heartbeat_seconds: number;
}

/** The stored credential, or a registration with the bootstrap token (retried while the platform is unreachable). */
async function credentialOf(cfg: AgentConfig, client: PlatformClient): Promise<Credential> {
  const file = path.join(cfg.stateDir, "credential.json");
  try {
    return JSON.parse(await readFile(file, "utf8")) as Credential;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  if (!cfg.bootstrapToken) throw new Error(`no ${file} and no AGENT_BOOTSTRAP_TOKEN to register with`);
  for (let delay = 1000; ; delay = Math.min(30_000, delay * 2)) {
    try {
      const r = await client.register(cfg.bootstrapToken, {
        machine_name: cfg.machineName,
        agent_version: AGENT_VERSION,
        gpu_slots: cfg.gpuSlots,
        capacity: { cpus: os.cpus().length, memory_bytes: os.totalmem() },
        labels: cfg.labels,
      });
      await mkdir(cfg.stateDir, { recursive: true, mode: 0o700 });
      await writeFile(`${file}.tmp`, JSON.stringify(r), { mode: 0o600 });
      await rename(`${file}.tmp`, file);
      log.info({ host: r.host_id }, "registered with the control plane");
      return r;
    } catch (err) {
      if (refused(err)) throw err;
      log.warn({ err: String(err) }, "registration failed; retrying");
      await sleep(delay);
    }
  }
}

async function main(): Promise<void> {
  const cfg = agentConfig(process.env);
  const runtime = createRuntime(process.env);
  const missing = await runtime.unavailable();
  if (missing) throw new Error(`the container runtime is not usable: ${missing}`);
  const client = new PlatformClient(cfg.platformUrl);
  const cred = await credentialOf(cfg, client);
  client.credential = cred.credential;
  const rec = new AgentReconciler({
    runtime,
    hostId: cred.host_id,
    namePrefix: cfg.namePrefix,
    advertiseHost: cfg.advertiseHost,
    maxCrashes: cfg.maxCrashes,
    drainMs: cfg.drainMs,
    log: (msg, extra) => log.info(extra ?? {}, msg),
  });
  const heartbeatMs = cred.heartbeat_seconds * 1000;
  let version: string | undefined;
  let poll: AbortController | null = null;
  let stopping = false;
  const stop = (code: number) => {
    stopping = true;
    poll?.abort();
    // containers run under conmon: they keep running while the agent is away, and are adopted when it is back
    setTimeout(() => process.exit(code), 50).unref();
  };

  // the host was deleted (only possible once no pod is placed there): what still carries its label is an orphan
  let refusing: Promise<void> | null = null;
  const refusedForGood = () =>
    (refusing ??= (async () => {
      log.error("the control plane refused the agent's credential (host deleted); removing its containers, stopping");
      await rec.removeAll().catch((err) => log.warn({ err: String(err) }, "containers not all removed"));
      stop(REFUSED);
    })());

  // reports: at every heartbeat, and after a pass whose report differs from the last one sent (one at a time)
  let sentJson = "";
  let reporting: Promise<void> | null = null;
  let reportAgain = false;
  const changed = () => JSON.stringify(rec.last) !== sentJson;
  const report = (beat: boolean): void => {
    if (!beat && !changed()) return;
    if (reporting) {
      reportAgain = true;
      return;
    }
    reporting = (async () => {
      do {
        reportAgain = false;
        const sent = rec.last;
        try {
          const r = await client.report(sent);
          sentJson = JSON.stringify(sent);
          rec.delivered(sent.pods);
          if (r.version !== version) poll?.abort(); // something changed: fetch it now
        } catch (err) {
          if (refused(err)) return void refusedForGood();
          log.warn({ err: String(err) }, "report failed; the next heartbeat retries");
          return;
        }
      } while (reportAgain && !stopping && changed());
    })().finally(() => (reporting = null));
  };

  // passes: one at a time; asking during one runs another right after
  let passing: Promise<void> | null = null;
  let again = false;
  const pass = (): Promise<void> => {
    if (passing) {
      again = true;
      return passing;
    }
    passing = (async () => {
      do {
        again = false;
        await rec.pass().catch((err) => log.warn({ err: String(err) }, "pass failed; retried"));
        report(false);
      } while (again && !stopping);
    })().finally(() => (passing = null));
    return passing;
  };

  const beat = setInterval(() => report(true), heartbeatMs);
  const checks = setInterval(() => void pass(), cfg.passMs);
  for (const sig of ["SIGTERM", "SIGINT"] as const)
    process.on(sig, () => {
      clearInterval(beat);
      clearInterval(checks);
      stop(0);
    });
  log.info({ host: cred.host_id, platform: cfg.platformUrl }, "agent started");

  // the long poll: the first call answers at once (no version), later ones when something changes
  for (let delay = 1000; !stopping;) {
    poll = new AbortController();
    try {
      const d = await client.desired(version, version ? cfg.waitSeconds : 0, poll.signal);
      delay = 1000;
      if (d.version !== version) {
        version = d.version;
        rec.setDesired(d.pods);
        log.info({ version, pods: d.pods.length }, "desired state received");
        void pass();
      }
    } catch (err) {
      if (stopping) break;
      if (refused(err)) {
        await refusedForGood();
        break;
      }
      if (poll.signal.aborted) continue; // a report saw a newer version: poll again at once
      log.warn({ err: String(err) }, "desired state not fetched; retrying");
      await sleep(delay);
      delay = Math.min(30_000, delay * 2);
    }
  }
}

main().catch((err) => {
  log.error({ err: String(err) }, "agent stopped");
  process.exit(refused(err) ? REFUSED : 1);
});
