import type { SecretBox } from "../../kernel/secrets.js";
import { maskPodSecrets } from "../secrets/env.js";
import http from "node:http";
import { tcpAnswers } from "../../net/tcp.js";
import type { RuntimeProvider } from "../../runtime/provider.js";
import type { ResolvedCheck } from "./spec.js";

/** One attempt of a check: passed, or why not (shown on the pod as the last failure's reason). */
export type ProbeResult = { ok: true } | { ok: false; reason: string };

/**
 * Runs a check once against a replica. HTTP and TCP go to the address its port is published on (what the edge
 * reaches), exec runs the command inside it (exit code 0 passes). Never throws.
 */
export async function probe(
  runtime: RuntimeProvider,
  container: { name: string; address: string | null },
  check: ResolvedCheck,
): Promise<ProbeResult> {
  const timeoutMs = check.timeout_seconds * 1000;
  try {
    if (check.type === "exec") {
      const r = await runtime.exec(container.name, check.command, { timeoutMs, maxBytes: 4096 });
      if (r.timedOut) return { ok: false, reason: `command timed out after ${check.timeout_seconds} s` };
      if (r.exitCode === 0) return { ok: true };
      const out = (r.stderr || r.stdout).trim().slice(-200);
      return { ok: false, reason: `command exited with code ${r.exitCode}${out ? `: ${out}` : ""}` };
    }
    if (!container.address) return { ok: false, reason: "the replica has no published port" };
    if (check.type === "tcp")
      return (await tcpAnswers(container.address, timeoutMs))
        ? { ok: true }
        : { ok: false, reason: `no TCP connection to port within ${check.timeout_seconds} s` };
    const status = await httpStatus(container.address, check.path, check.headers ?? {}, timeoutMs);
    if (typeof status === "string") return { ok: false, reason: status };
    const [min, max] = [check.status_min ?? 200, check.status_max ?? 399];
    return status >= min && status <= max
      ? { ok: true }
      : { ok: false, reason: `GET ${check.path} answered ${status} (expected ${min}-${max})` };
  } catch (err) {
    return { ok: false, reason: (err as Error).message.slice(0, 200) };
  }
}

/** The status of a GET, or a sentence saying why there was none. A fresh connection each time (no pooling). */
function httpStatus(
  address: string,
  path: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<number | string> {
  const i = address.lastIndexOf(":");
  return new Promise((resolve) => {
    const req = http.get(
      {
        host: address.slice(0, i),
        port: Number(address.slice(i + 1)),
        path,
        headers: { "user-agent": "platform-check", ...headers, connection: "close" },
        agent: false,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.setTimeout(timeoutMs, () => {
      req.destroy();
      resolve(`GET ${path} got no answer within ${timeoutMs / 1000} s`);
    });
    req.on("error", (err) => resolve(`GET ${path} failed: ${err.message}`));
  });
}

/** a failure's reason with the pod's secrets masked: an exec check's output could print one */
export const masked = (box: SecretBox | undefined, pod: { env_sealed: string }, r: ProbeResult): ProbeResult =>
  r.ok ? r : { ok: false, reason: maskPodSecrets(box, pod.env_sealed, r.reason) };
