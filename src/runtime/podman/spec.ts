import { RuntimeError, type ContainerSpec } from "../provider.js";
import { envArgs } from "./cli.js";

/**
 * Limits every container gets on this kind of host: podman 4.3 otherwise asks for RLIMIT_NOFILE/NPROC
 * above the host's own and the container fails to start.
 */
export const ULIMITS = ["--ulimit", "nofile=20000:20000", "--ulimit", "nproc=20000:20000"];

const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** an image reference: registry/path:tag@digest; never starting with "-", so it is never read as a flag */
const IMAGE = /^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$/;
const LABEL_KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/;

export function checkName(name: string): void {
  if (!NAME.test(name)) throw new RuntimeError(`container name "${name}" must be 1-63 of [a-z0-9-]`, "bad_spec");
}

export function checkImage(image: string): void {
  if (!IMAGE.test(image)) throw new RuntimeError(`"${image}" is not an image reference`, "bad_spec");
}

function checkPath(path: string, what: string): void {
  if (!path.startsWith("/") || /[,:\n\0]/.test(path))
    throw new RuntimeError(`${what} "${path}" must be an absolute path without ",", ":" or newlines`, "bad_spec");
}

function checkStrings(list: string[], what: string): void {
  if (list.some((a) => typeof a !== "string" || a.includes("\0")))
    throw new RuntimeError(`${what} must be strings without NUL bytes`, "bad_spec");
}

/** The registry part of an image reference ("127.0.0.1:5000", "ghcr.io"), or null for Docker Hub and local names. */
export function registryHost(image: string): string | null {
  const slash = image.indexOf("/");
  if (slash < 0) return null;
  const first = image.slice(0, slash);
  return first.includes(".") || first.includes(":") || first === "localhost" ? first : null;
}

/** The platform's own registry is plain HTTP on loopback. */
export function isLoopbackRegistry(host: string | null): boolean {
  if (!host) return false;
  const h = host.replace(/:\d+$/, "");
  return h === "localhost" || h.startsWith("127.") || h === "[::1]";
}

export interface RunOptions {
  /** run catatonit as PID 1 (signals reach the program, orphans are reaped), when the host has it */
  init: boolean;
  /** --device arguments for the GPU the spec asks for */
  devices: string[];
}

/** `podman run` arguments for a spec, and the environment podman gets (container env values, see envArgs). */
export function runArgs(spec: ContainerSpec, opts: RunOptions): { args: string[]; env: Record<string, string> } {
  checkName(spec.name);
  checkImage(spec.image);
  const { cpus, memoryMb, pids } = spec.limits;
  if (!(cpus > 0) || !(memoryMb >= 6) || !(pids >= 1))
    throw new RuntimeError("limits need cpus > 0, memoryMb >= 6 and pids >= 1", "bad_spec");
  const args = [
    "run",
    "--detach",
    "--name",
    spec.name,
    "--pull",
    "never",
    ...ULIMITS,
    "--cpus",
    String(cpus),
    "--memory",
    `${Math.floor(memoryMb)}m`,
    "--memory-swap",
    `${Math.floor(memoryMb)}m`,
    "--pids-limit",
    String(Math.floor(pids)),
    "--network",
    spec.network ?? "none",
    // podman would otherwise copy the host's proxy variables into every container
    "--http-proxy=false",
    "--log-opt",
    "max-size=10mb",
  ];
  if (spec.port != null) {
    if (!Number.isInteger(spec.port) || spec.port < 1 || spec.port > 65535)
      throw new RuntimeError(`port ${spec.port} is not a TCP port`, "bad_spec");
    if (spec.network === null)
      throw new RuntimeError("a container without a network cannot publish a port", "bad_spec");
    // loopback only, at a free host port podman picks (read back from inspect)
    args.push("--publish", `127.0.0.1::${spec.port}`);
  }
  for (const [key, value] of Object.entries(spec.labels)) {
    if (!LABEL_KEY.test(key) || value.includes("\n")) throw new RuntimeError(`label "${key}" is not valid`, "bad_spec");
    args.push("--label", `${key}=${value}`);
  }
  const env = envArgs(spec.env);
  args.push(...env.args);
  for (const m of spec.mounts) {
    checkPath(m.source, "mount source");
    checkPath(m.target, "mount target");
    args.push("--mount", `type=bind,source=${m.source},destination=${m.target}${m.readOnly ? ",ro=true" : ""}`);
  }
  if (spec.entrypoint) {
    checkStrings(spec.entrypoint, "entrypoint");
    args.push("--entrypoint", JSON.stringify(spec.entrypoint));
  }
  if (spec.timeoutSeconds != null) {
    if (!Number.isInteger(spec.timeoutSeconds) || spec.timeoutSeconds < 1)
      throw new RuntimeError("timeoutSeconds must be a whole number >= 1", "bad_spec");
    args.push("--timeout", String(spec.timeoutSeconds));
  }
  if (spec.autoRemove) args.push("--rm");
  if (opts.init) args.push("--init");
  args.push(...opts.devices);
  args.push(spec.image);
  if (spec.command) {
    checkStrings(spec.command, "command");
    args.push(...spec.command);
  }
  return { args, env: env.env };
}
