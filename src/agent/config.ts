import { readdirSync } from "node:fs";
import os from "node:os";
import { int } from "../config/config.js";

/** The agent's settings, from its environment (the install script writes them to AGENT_STATE_DIR/agent.env). */
export interface AgentConfig {
  /** PLATFORM_URL: the control plane, reached over HTTPS (http only for loopback tests) */
  platformUrl: string;
  /** AGENT_BOOTSTRAP_TOKEN: one-time; unused once the credential file exists */
  bootstrapToken: string | null;
  /** AGENT_STATE_DIR: holds credential.json (mode 0600) */
  stateDir: string;
  /** AGENT_HOST_NAME: the machine's name as reported (default os.hostname()) */
  machineName: string;
  /** AGENT_GPU_SLOTS: default the number of /dev/nvidiaN devices */
  gpuSlots: number;
  /** AGENT_LABELS: k=v,k=v matched by host_labels */
  labels: Record<string, string>;
  /** AGENT_NAME_PREFIX: prefixed to container names (default none) */
  namePrefix: string;
  /** AGENT_ADVERTISE_HOST: the address the edge reaches this machine's published ports at (default 127.0.0.1) */
  advertiseHost: string;
  /** AGENT_WAIT_SECONDS: long-poll length (25) */
  waitSeconds: number;
  /** AGENT_PASS_MS: how often containers are checked besides every change (1000) */
  passMs: number;
  /** AGENT_MAX_CRASHES (5), AGENT_DRAIN_MS (2000): as the apps area's APPS_MAX_CRASHES, APPS_DRAIN_MS */
  maxCrashes: number;
  drainMs: number;
}

type Env = Record<string, string | undefined>;

function gpus(): number {
  try {
    return readdirSync("/dev").filter((f) => /^nvidia\d+$/.test(f)).length;
  } catch {
    return 0;
  }
}

export function agentConfig(env: Env): AgentConfig {
  const platformUrl = (env.PLATFORM_URL ?? "").replace(/\/+$/, "");
  if (!/^https?:\/\/./.test(platformUrl)) throw new Error("PLATFORM_URL must be the control plane's https:// address");
  const labels: Record<string, string> = {};
  for (const pair of (env.AGENT_LABELS ?? "").split(",").filter(Boolean)) {
    const [k, ...v] = pair.split("=");
    if (!k || !v.length) throw new Error(`AGENT_LABELS: "${pair}" is not key=value`);
    labels[k.trim()] = v.join("=").trim();
  }
  return {
    platformUrl,
    bootstrapToken: env.AGENT_BOOTSTRAP_TOKEN || null,
    stateDir: env.AGENT_STATE_DIR || "/var/lib/platform-agent",
    machineName: (env.AGENT_HOST_NAME || os.hostname()).slice(0, 253),
    gpuSlots: env.AGENT_GPU_SLOTS ? int(env, "AGENT_GPU_SLOTS", 0, 0, 64) : gpus(),
    labels,
    namePrefix: env.AGENT_NAME_PREFIX ?? "",
    advertiseHost: env.AGENT_ADVERTISE_HOST || "127.0.0.1",
    waitSeconds: int(env, "AGENT_WAIT_SECONDS", 25, 1, 60),
    passMs: int(env, "AGENT_PASS_MS", 1000, 100, 60_000),
    maxCrashes: int(env, "AGENT_MAX_CRASHES", 5, 1, 100),
    drainMs: int(env, "AGENT_DRAIN_MS", 2000, 0, 600_000),
  };
}
