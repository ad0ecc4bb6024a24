import { ConfigError, httpUrl, int } from "../config/config.js";

type Env = Record<string, string | undefined>;

/** The builds area's settings (README: src/builds/README.md). */
export interface BuildsConfig {
  /** the buildah binary (Debian package buildah) */
  buildah: string;
  /** builds one host runs at once; more wait `queued` */
  concurrency: number;
  /** wall-clock limit of one build (pull, build, push), seconds */
  timeoutSeconds: number;
  /** largest source archive (compressed), bytes */
  maxSourceBytes: number;
  /** largest unpacked context, bytes */
  maxContextBytes: number;
  /** lifetime of an upload URL, seconds */
  uploadTtlSeconds: number;
  /** per-process data limit (RLIMIT_DATA) of RUN steps, and the build's memory cgroup limit where one is made, MiB */
  memoryMb: number;
  /** CPUs a build may use where a CPU cgroup is made (cfs quota) */
  cpus: number;
  /** processes a build may have where a pids cgroup is made */
  pids: number;
  /** niceness of the builder's processes (0-19): builds yield the CPU to serving apps */
  nice: number;
  /** characters of builder output kept per build (the last ones) */
  logBytes: number;
  /** how often the runner looks for queued builds and for cancels made through other processes, ms */
  pollMs: number;
  /** the public base of upload URLs (https://api.example.com); null: the address the request came to */
  uploadBaseUrl: string | null;
}

export function buildsConfig(env: Env): BuildsConfig {
  const cpus = Number(env.BUILD_CPUS || "1");
  if (!Number.isFinite(cpus) || cpus < 0.1 || cpus > 256)
    throw new ConfigError("BUILD_CPUS", `must be a number between 0.1 and 256, got "${env.BUILD_CPUS}"`);
  return {
    buildah: env.BUILDAH_BIN || "buildah",
    concurrency: int(env, "BUILD_CONCURRENCY", 1, 1, 64),
    timeoutSeconds: int(env, "BUILD_TIMEOUT_SECONDS", 900, 5, 86_400),
    maxSourceBytes: int(env, "BUILD_MAX_SOURCE_MB", 100, 1, 10_240) * 1024 * 1024,
    maxContextBytes: int(env, "BUILD_MAX_CONTEXT_MB", 1024, 1, 102_400) * 1024 * 1024,
    uploadTtlSeconds: int(env, "BUILD_UPLOAD_TTL_SECONDS", 600, 10, 86_400),
    memoryMb: int(env, "BUILD_MEMORY_MB", 2048, 256, 1_048_576),
    cpus,
    pids: int(env, "BUILD_PIDS", 1024, 16, 1_000_000),
    nice: int(env, "BUILD_NICE", 10, 0, 19),
    logBytes: int(env, "BUILD_LOG_BYTES", 1024 * 1024, 4096, 64 * 1024 * 1024),
    pollMs: int(env, "BUILD_POLL_MS", 1000, 100, 60_000),
    uploadBaseUrl: httpUrl(env, "BUILD_UPLOAD_BASE_URL"),
  };
}
