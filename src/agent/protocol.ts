/**
 * What the host agent (src/agent) and the control plane (src/orgs/hosts) say to each other over HTTPS. The
 * agent never reads the store: it learns its pods from `GET /v1/agent/desired` and tells what runs through
 * `POST /v1/agent/report`. Both sides import these types; nothing here has effects.
 */
import type { ContainerSpec } from "../runtime/provider.js";

/** Labels the agent finds its containers by (the same the apps area's local reconciler uses). */
export const LABEL_POD = "platform.pod";
export const LABEL_GENERATION = "platform.generation";
export const LABEL_HOST = "platform.host";

/** Sent with `Authorization: Bearer <bootstrap token>` (hbt_…), which registration uses up. */
export interface RegisterRequest {
  /** the machine's own name (shown beside the name the admin gave) */
  machine_name: string;
  agent_version: string;
  gpu_slots: number;
  capacity: { cpus: number; memory_bytes: number };
  labels: Record<string, string>;
}

export interface RegisterResponse {
  host_id: string;
  /** the agent's long-lived credential: sent as `Authorization: Bearer`; only its SHA-256 is kept */
  credential: string;
  heartbeat_seconds: number;
}

/** One pod the agent must drive: the container spec of its current generation (null when it must not run). */
export interface DesiredPod {
  pod_id: string;
  generation: number;
  desired_state: "running" | "stopped" | "removed";
  spec: ContainerSpec | null;
}

export interface DesiredState {
  /** changes whenever anything below changes: the agent passes it back as `version` to wait for the next one */
  version: string;
  heartbeat_seconds: number;
  pods: DesiredPod[];
}

/** What the agent observed of one pod (for the generation and desired state it last received). */
export interface PodReport {
  pod_id: string;
  generation: number;
  desired_state: "running" | "stopped" | "removed";
  state: "creating" | "running" | "stopped" | "failed" | "removed";
  reason: string | null;
  /** host:port the edge reaches the serving replica at (AGENT_ADVERTISE_HOST : published port) */
  address: string | null;
  serving_generation: number | null;
  restart_count: number;
}

export interface ReportRequest {
  pods: PodReport[];
  /** containers carrying this host's label, adopted ones included */
  containers: number;
}

export interface ReportResponse {
  /** the desired state's version now: a different one than the agent holds means fetch again at once */
  version: string;
}
