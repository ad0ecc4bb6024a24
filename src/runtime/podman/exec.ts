import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { RuntimeError, TIMED_OUT_EXIT_CODE, type ExecResult } from "../provider.js";
import { lastError } from "./cli.js";

export { TIMED_OUT_EXIT_CODE };

/** A marker every process of one exec session inherits, so a timed-out session can be found and killed. */
const MARKER = "PLATFORM_EXEC_ID";

/**
 * Kills every process (on this host, so inside any container) whose environment carries the session's
 * marker. Killing `podman exec` itself would leave the command running inside the container: conmon
 * keeps the session. A process that scrubs its environment escapes this; the container's own limits
 * (pids, memory, and for sandboxes the container's timeout) still hold.
 */
async function killSession(id: string): Promise<number> {
  const needle = `${MARKER}=${id}\0`;
  let killed = 0;
  for (const entry of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, "latin1").catch(() => "");
    if (!environ.startsWith(needle) && !environ.includes(`\0${needle}`)) continue;
    try {
      process.kill(Number(entry), "SIGKILL");
      killed++;
    } catch {
      // gone already
    }
  }
  return killed;
}

/** Collects a stream up to maxBytes, reading (and dropping) the rest so the process never blocks on a full pipe. */
function collector(maxBytes: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  let cut = false;
  return {
    push(b: Buffer) {
      if (size >= maxBytes) {
        cut = true;
        return;
      }
      const room = maxBytes - size;
      if (b.length > room) cut = true;
      const part = b.length > room ? b.subarray(0, room) : b;
      chunks.push(part);
      size += part.length;
    },
    text: () => Buffer.concat(chunks).toString("utf8"),
    get truncated() {
      return cut;
    },
  };
}

/** podman's own refusals (exit 125 or 255, "Error: ..."), as opposed to a command that happened to exit so. */
const PODMAN_REFUSAL =
  /container state improper|no such container|no container with name|exec session|OCI runtime|can only create exec sessions/i;

/**
 * `podman exec` with a time bound (the session's processes are killed when it passes) and an output
 * bound per stream (the rest is read and dropped).
 */
export function boundedExec(
  bin: string,
  ociRuntime: string,
  name: string,
  command: string[],
  opts: { timeoutMs: number; maxBytes: number },
): Promise<ExecResult> {
  if (!command.length) return Promise.reject(new RuntimeError("exec needs a command", "bad_spec"));
  const id = randomUUID();
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ["--runtime", ociRuntime, "exec", "--env", `${MARKER}=${id}`, name, ...command], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out = collector(opts.maxBytes);
    // stderr is kept a little beyond the bound, so podman's own error line is recognised whatever the bound
    const err = collector(Math.max(opts.maxBytes, 4096));
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    let timedOut = false;
    let settled = false;
    const timer = setTimeout(async () => {
      timedOut = true;
      await killSession(id);
      child.kill("SIGKILL");
      // a session that forked between the scan and the kill
      setTimeout(() => void killSession(id), 200).unref();
    }, opts.timeoutMs);
    child.on("error", (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (settled) return;
      settled = true;
      reject(new RuntimeError(`podman is not installed at ${bin} (${e.code ?? e.message})`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (settled) return;
      settled = true;
      const fullStderr = err.text();
      const stderrBytes = Buffer.from(fullStderr);
      const stderr =
        stderrBytes.length > opts.maxBytes ? stderrBytes.subarray(0, opts.maxBytes).toString() : fullStderr;
      if (
        !timedOut &&
        (code === 125 || code === 255) &&
        /^Error: /m.test(fullStderr) &&
        PODMAN_REFUSAL.test(lastError(fullStderr))
      )
        return reject(new RuntimeError(`exec in ${name}: ${lastError(fullStderr)}`));
      resolve({
        exitCode: timedOut ? TIMED_OUT_EXIT_CODE : (code ?? (signal ? 128 + 9 : 1)),
        stdout: out.text(),
        stderr,
        truncated: out.truncated || err.truncated || stderrBytes.length > opts.maxBytes || timedOut,
        timedOut,
      });
    });
  });
}
