import { execFile } from "node:child_process";
import { RuntimeError } from "../provider.js";

/** What one podman invocation answered. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** killed (SIGKILL) after this long; default 2 minutes */
  timeoutMs?: number;
  /** variables added to podman's own environment (container env values travel this way, see envArgs) */
  env?: Record<string, string>;
}

/**
 * The podman command line, run without a shell. Every call names the OCI runtime: `crun` refuses this
 * kind of host (cgroup v1 / hybrid), `runc` works; the runtime is recorded per container at creation, so
 * naming it on every call only keeps the CLI's defaults out of the picture.
 */
export class PodmanCli {
  constructor(
    readonly bin: string,
    private readonly ociRuntime = "runc",
  ) {}

  run(args: string[], opts: CliOptions = {}): Promise<CliResult> {
    return new Promise((resolve, reject) => {
      execFile(
        this.bin,
        ["--runtime", this.ociRuntime, ...args],
        {
          timeout: opts.timeoutMs ?? 120_000,
          killSignal: "SIGKILL",
          maxBuffer: 64 * 1024 * 1024,
          env: opts.env ? { ...process.env, ...opts.env } : process.env,
          encoding: "utf8",
        },
        (err, stdout, stderr) => {
          if (!err) return resolve({ code: 0, stdout, stderr });
          const e = err as NodeJS.ErrnoException & { code?: number | string; killed?: boolean };
          if (e.code === "ENOENT" || e.code === "EACCES")
            return reject(new RuntimeError(`podman is not installed at ${this.bin} (${e.code})`));
          if (e.killed)
            return reject(new RuntimeError(`podman ${args[0]} did not finish in ${opts.timeoutMs ?? 120_000} ms`));
          resolve({ code: typeof e.code === "number" ? e.code : 1, stdout, stderr });
        },
      );
    });
  }

  /** Runs and throws a RuntimeError (message from podman's stderr) unless it exits 0. */
  async ok(args: string[], what: string, opts: CliOptions = {}): Promise<string> {
    const res = await this.run(args, opts);
    if (res.code !== 0) throw new RuntimeError(`${what}: ${lastError(res.stderr)}`, errorKind(res.stderr));
    return res.stdout;
  }
}

/** podman's own error line ("Error: ...") without the prefix, or the last line of stderr. */
export function lastError(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const error = [...lines].reverse().find((l) => l.startsWith("Error: "));
  return (error ?? lines.at(-1) ?? "podman failed without a message").replace(/^Error: /, "").slice(0, 500);
}

const PULL_FAILURE =
  /(manifest unknown|unauthorized|authentication required|requested access to the resource is denied|pinging container registry|initializing source|reading manifest|name unknown|repository name must|invalid reference format|short-name|image not known)/i;

function errorKind(stderr: string): RuntimeError["kind"] {
  return PULL_FAILURE.test(stderr) ? "image_pull" : "internal";
}

export const isNoSuchContainer = (stderr: string) => /no such container|no container with name or id/i.test(stderr);
export const isNoSuchNetwork = (stderr: string) =>
  /network not found|unable to find network|no such network/i.test(stderr);
export const isImageMissing = (stderr: string) => /image not known/i.test(stderr);
export const isNameInUse = (stderr: string) => /already in use|already exists/i.test(stderr);

/**
 * Variables podman itself reads (search path, storage and registry settings, proxies, the Go runtime):
 * a container variable of that name goes on the command line, never into podman's own environment.
 */
function podmanReads(key: string): boolean {
  const k = key.toUpperCase();
  return (
    /^(PATH|HOME|TMPDIR|SHELL|USER|LOGNAME|LANG|LANGUAGE|TZ|TERM|NOTIFY_SOCKET|REGISTRY_AUTH_FILE|DOCKER_CONFIG)$/.test(
      k,
    ) ||
    /^(LC_|XDG_|CONTAINERS_|PODMAN_|BUILDAH_|STORAGE_|GO|LD_|SSL_|DBUS_|CONMON|NETAVARK|AARDVARK)/.test(k) ||
    k.endsWith("_PROXY")
  );
}

const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/**
 * The container's environment as podman arguments. Values go through podman's own environment
 * (`--env NAME` copies the variable from there), so secrets such as DATABASE_URL never appear on a
 * command line another user of the host could read in /proc; names podman itself reads go as NAME=value.
 */
export function envArgs(env: Record<string, string>): { args: string[]; env: Record<string, string> } {
  const args: string[] = [];
  const passed: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (!ENV_KEY.test(key)) throw new RuntimeError(`environment variable name "${key}" is not valid`, "bad_spec");
    if (value.includes("\0")) throw new RuntimeError(`environment variable ${key} holds a NUL byte`, "bad_spec");
    if (podmanReads(key)) {
      args.push("--env", `${key}=${value}`);
    } else {
      args.push("--env", key);
      passed[key] = value;
    }
  }
  return { args, env: passed };
}
