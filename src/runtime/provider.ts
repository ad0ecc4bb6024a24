/**
 * The contract between the platform (pods, sandboxes, builds later) and whatever runs containers.
 * `local` (podman on this host) is the default; a Kubernetes provider maps the same calls onto a
 * Deployment + Service per pod (src/runtime/README.md). Routes never call it: jobs and reconcilers do.
 *
 * Every call is addressed by the container name the platform chose, and is safe to retry: creating a
 * name that exists returns it, removing one that is gone succeeds. Containers carry labels, so a
 * restarted platform finds (adopts) what is already running instead of starting a duplicate.
 */
import { ApiError, type MapsToApiError } from "../http/errors.js";

/** CPU, memory and process limits of one container, from the pod's size. */
export interface Limits {
  cpus: number;
  memoryMb: number;
  pids: number;
  /** GPU model the container needs (null: none); a host without it refuses with provision_failed */
  gpu?: string | null;
}

export interface ContainerSpec {
  /** unique, [a-z0-9-], chosen by the platform; the container is found again by this name */
  name: string;
  image: string;
  /** overrides the image's CMD (ENTRYPOINT stays unless `entrypoint` is given) */
  command?: string[] | null;
  /** overrides the image's ENTRYPOINT (sandboxes run `sleep` whatever the image's own program is) */
  entrypoint?: string[] | null;
  env: Record<string, string>;
  /** the port the process listens on inside the container; published on 127.0.0.1 at a free host port */
  port?: number | null;
  limits: Limits;
  /** the owner's network (one per owner, so tenants cannot reach each other); null: no network at all */
  network: string | null;
  /** host directories mounted into the container (read-write unless readOnly) */
  mounts: { source: string; target: string; readOnly?: boolean }[];
  /** labels the platform finds its containers by (pod id, generation, owner) */
  labels: Record<string, string>;
  /** registry credentials for pulling this image, if it needs them */
  pullAuth?: { username: string; password: string } | null;
  /**
   * the runtime itself kills the container this many seconds after it starts, whether or not the platform
   * is running then (sandboxes); null: no limit
   */
  timeoutSeconds?: number | null;
  /** the runtime deletes the container once it exits (sandboxes); pods keep theirs for logs and adoption */
  autoRemove?: boolean;
}

/** `removing`: a removal was cut half-way (podman killed mid-`rm`); only another removal finishes it */
export type ContainerStatus = "created" | "running" | "exited" | "removing" | "unknown";

export interface ContainerInfo {
  name: string;
  id: string;
  status: ContainerStatus;
  /** 127.0.0.1:<port> the published port answers on (null without a port or when not running) */
  address: string | null;
  /** the container's address on its owner network */
  networkAddress: string | null;
  exitCode: number | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  labels: Record<string, string>;
  /** why it stopped when the runtime knows more than the exit code ("out of memory", an OCI error) */
  reason?: string | null;
}

/** The exit code an exec reports when its command was stopped at the time bound (as coreutils' timeout does). */
export const TIMED_OUT_EXIT_CODE = 124;

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** true when output was cut at the bound or the command ran out of time */
  truncated: boolean;
  timedOut: boolean;
}

export interface ContainerStats {
  /** percent of one CPU, averaged over the sample */
  cpuPercent: number;
  memoryBytes: number;
  memoryLimitBytes: number;
  pids: number;
}

/** One container's cumulative counters at a sample (statsMany): rates are the caller's, from two samples. */
export interface ContainerCounters {
  /** CPU time used since start, ns */
  cpuNano: number;
  /** the sample's clock, ns (rates divide by its difference) */
  atNano: number;
  /** podman's own CPU percent since the container started (of one CPU), for a first sample */
  cpuPercentSinceStart: number;
  memoryBytes: number;
  memoryLimitBytes: number;
  netInBytes: number;
  netOutBytes: number;
}

/** One line of a container's output with its time, as `logLines` reads it. */
export interface LogLine {
  /** ns since the epoch, as the runtime stamped the line */
  ns: bigint;
  stream: "stdout" | "stderr";
  text: string;
}

export interface RuntimeProvider {
  readonly name: string;
  /** null when the runtime can run containers here; otherwise a sentence saying what is missing and how to install it */
  unavailable(): Promise<string | null>;
  /**
   * makes sure the owner's network exists (isolated: containers of other networks cannot reach it);
   * the gateway is this host as the containers see it, the subnet is where they connect from
   */
  ensureNetwork(networkName: string): Promise<{ name: string; subnet: string; gateway: string }>;
  removeNetwork(networkName: string): Promise<void>;
  /** creates and starts the container (or returns it if a container with that name exists) */
  create(spec: ContainerSpec): Promise<ContainerInfo>;
  start(name: string): Promise<ContainerInfo>;
  /**
   * Starts a stopped container without describing it afterwards: for a caller that knows what it needs of it (a
   * container kept stopped keeps its published ports). Optional: without it, `start`.
   */
  resume?(name: string): Promise<void>;
  stop(name: string, timeoutSeconds?: number): Promise<void>;
  /** gone afterwards, with no process of it left (a half-done removal is finished) */
  remove(name: string): Promise<void>;
  /**
   * kills leftover processes (podman: conmon, runc) of containers the runtime no longer has, when this runtime
   * removed them or `owned` accepts their name; never those of other containers. Returns the container ids.
   */
  reapStrays?(owned: (name: string) => boolean): Promise<string[]>;
  inspect(name: string): Promise<ContainerInfo | null>;
  /** every container carrying all of the given labels */
  list(labels: Record<string, string>): Promise<ContainerInfo[]>;
  logs(name: string, tail: number): Promise<string[]>;
  /**
   * The lines written after `sinceNs` and up to `untilNs` (ns since the epoch), both streams in time order, with
   * their times: log drains (src/drains) ship them from a cursor. Optional: a runtime without it ships no pod logs.
   */
  logLines?(name: string, sinceNs: bigint, untilNs: bigint): Promise<LogLine[]>;
  exec(name: string, command: string[], opts: { timeoutMs: number; maxBytes: number }): Promise<ExecResult>;
  stats(name: string): Promise<ContainerStats | null>;
  /**
   * cumulative counters of several running containers in one runtime call (metrics' per-minute sampler); names
   * not running are absent. Optional: a runtime without it gives no CPU or memory series.
   */
  statsMany?(names: string[]): Promise<Map<string, ContainerCounters>>;
  /** true when the container's port answers a TCP connect (or, without a port, the process runs) */
  health(name: string): Promise<boolean>;
  /**
   * open TCP connections to the container's `port` (requests in flight, or kept alive by the edge); null when
   * this runtime cannot tell. A rollout drains an old replica until none is left before it stops it.
   */
  connections?(name: string, port: number): Promise<number | null>;
}

/** A runtime failure the caller can show (image missing, registry refused, no GPU). */
export class RuntimeError extends Error implements MapsToApiError {
  constructor(
    message: string,
    readonly kind: "image_pull" | "no_capacity" | "bad_spec" | "internal" = "internal",
  ) {
    super(message);
  }
  toApiError(): ApiError {
    if (this.kind === "no_capacity") return new ApiError("provision_failed", this.message);
    if (this.kind === "bad_spec") return new ApiError("invalid_request", this.message);
    return new ApiError("runtime_failed", this.message);
  }
}
