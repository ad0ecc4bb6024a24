import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";

export const INSTALL = "apt-get install buildah";

/** A bare command name is looked up on PATH, as a shell would. */
export function resolveBin(bin: string): string | null {
  if (bin.includes("/")) return existsSync(bin) ? path.resolve(bin) : null;
  for (const dir of (process.env.PATH ?? "").split(":").filter(Boolean)) {
    const full = path.join(dir, bin);
    if (existsSync(full)) return full;
  }
  return null;
}

let probe: { at: number; problem: string | null; bin: string } | null = null;

/**
 * Null when builds can run on this host, else one sentence saying what is missing, with the install command.
 * A success is kept for the process's life; a failure is probed again after 30 s.
 */
export async function builderProblem(bin: string): Promise<string | null> {
  if (probe && probe.bin === bin && (probe.problem === null || Date.now() - probe.at < 30_000)) return probe.problem;
  const problem = await (async () => {
    const full = resolveBin(bin);
    if (!full) return `The image builder (${bin}) is not installed on this host; install with: ${INSTALL}`;
    if (!resolveBin("unshare"))
      return "unshare (util-linux) is missing on this host; install with: apt-get install util-linux";
    if (process.getuid?.() !== 0)
      return "Builds need the platform to run as root (buildah with chroot isolation in namespaces of their own).";
    const ok = await new Promise<string | null>((resolve) =>
      execFile(full, ["--version"], { timeout: 15_000 }, (err, stdout) => resolve(err ? null : stdout.trim())),
    );
    return ok ? null : `The image builder (${full}) does not run on this host; reinstall with: ${INSTALL}`;
  })();
  probe = { at: Date.now(), problem, bin };
  return problem;
}

export interface StepOptions {
  /** argv of the step (the program first) */
  argv: string[];
  /** extra environment (beside PATH, HOME, LANG) */
  env?: Record<string, string>;
  /** each chunk of stdout and stderr, as it comes */
  output: (text: string) => void;
  /** the step's processes are moved into these cgroup.procs files before the program starts */
  cgroupProcs?: string[];
}

export interface Step {
  pid: number | null;
  /** resolves with the exit code (or the signal's name) once every process of the step is gone */
  done: Promise<{ code: number | null; signal: string | null }>;
  /** SIGKILL to the step: its PID namespace goes with its first process, so every process of it dies */
  kill(): void;
}

/**
 * Runs one builder step in namespaces of its own (`unshare`): a PID namespace (killing its first process
 * kills every process of it, at once), a mount namespace (overlay mounts vanish with it, so a killed build
 * leaves no mount behind), and, with `isolateNetwork`, an empty network namespace: RUN steps under chroot
 * isolation would otherwise share the host's network, including the control store and the registry on
 * loopback. The step runs niced, with the given cgroups when there are any.
 */
export function runStep(opts: StepOptions & { isolateNetwork: boolean; nice: number }): Step {
  const unshare = [
    "unshare",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
    "--propagation",
    "private",
    "--ipc",
    "--uts",
    ...(opts.isolateNetwork ? ["--net"] : []),
    "--",
  ];
  const command = ["nice", "-n", String(opts.nice), ...unshare, ...opts.argv];
  // with cgroups: a shell joins them, then becomes the step (exec), so nothing of the step starts outside
  const argv = opts.cgroupProcs?.length
    ? [
        "/bin/sh",
        "-c",
        'for f in $BUILD_CGROUPS; do echo $$ > "$f" || exit 125; done; exec "$@"',
        "build-step",
        ...command,
      ]
    : command;
  const child = spawn(argv[0], argv.slice(1), {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin",
      HOME: process.env.HOME ?? "/root",
      LANG: "C.UTF-8",
      ...(opts.cgroupProcs?.length ? { BUILD_CGROUPS: opts.cgroupProcs.join(" ") } : {}),
      ...opts.env,
    },
  });
  child.stdout.setEncoding("utf8").on("data", opts.output);
  child.stderr.setEncoding("utf8").on("data", opts.output);
  const done = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.on("error", (err) => {
      opts.output(`${argv[0]} could not start: ${err.message}\n`);
      resolve({ code: 127, signal: null });
    });
    child.on("close", (code, signal) => resolve({ code, signal }));
  });
  return {
    pid: child.pid ?? null,
    done,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/**
 * Kills a builder a dead platform left behind: the process id recorded for the build, only if it still runs
 * a step of that build (its command line names the build's working directory).
 */
export async function killLeftover(pid: number, workDir: string): Promise<boolean> {
  const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
  if (!cmdline.split("\0").some((arg) => arg.startsWith(workDir))) return false;
  try {
    process.kill(pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}
