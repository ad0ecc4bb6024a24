/**
 * bench:apps, issue 30's figure, in a function of its own: wake on request. A pod with idle_stop_seconds 1 is
 * stopped by the idle sweep (the platform runs with APPS_IDLE_MIN_SECONDS=1 and APPS_IDLE_SWEEP_MS=200), then the
 * time from the first request through the edge to its answer's first byte (status and headers) while the edge
 * holds it and the pod starts; beside bare podman: `podman start` of a stopped container of the same image (same
 * limits), then requests until one answers. Target: ≤ 1.5×.
 */
import { execFile } from "node:child_process";
import http from "node:http";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { ms, pct } from "./report.js";

const run = promisify(execFile);

/** what the platform needs to run for these figures (merged into its environment) */
export const WAKE_ENV = { APPS_IDLE_MIN_SECONDS: "1", APPS_IDLE_SWEEP_MS: "200" };

export interface WakeBenchDeps {
  api: (method: string, url: string, token?: string, body?: unknown) => Promise<{ status: number; json: any }>;
  until: <T>(what: string, fn: () => Promise<T | undefined>, timeoutMs?: number, everyMs?: number) => Promise<T>;
  answers: (address: string) => Promise<boolean>;
  token: string;
  image: string;
  edgePort: string;
  log: (msg: string) => void;
  /** wakes measured (BENCH_WAKES) */
  count: number;
}

/** Runs the wakes, platform and bare interleaved; returns the table rows (figure, platform, bare, ratio). */
export async function wakeFigures(d: WakeBenchDeps): Promise<string[][]> {
  const { api, until, answers, token, image } = d;
  const res = await api("POST", "/v1/pods", token, { name: "bench-wake", image, port: 8080, idle_stop_seconds: 1 });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.json)}`);
  const id = res.json.id as string;
  const host = new URL(res.json.url).hostname;
  const name = `bench-bare-wake-${process.pid}`;
  const limits = ["--cpus", "0.25", "--memory", "256m", "--pids-limit", "512"];
  const flags = ["--runtime", "runc", "--ulimit", "nofile=20000:20000", "--ulimit", "nproc=20000:20000", ...limits];
  await run("podman", ["run", "-d", "--name", name, ...flags, "-p", "127.0.0.1::8080", image]);
  // the edge runs in a process of its own, forked once the API serves (run alone, BENCH_ONLY=wake, it may not yet)
  await until("the edge", () => firstByte(d.edgePort, "nothing.invalid").then(() => true), 60_000, 100);
  const [plat, bare] = [[] as number[], [] as number[]];
  try {
    for (let i = 0; i < d.count; i++) {
      await until(
        "stopped while idle",
        async () => {
          const p = (await api("GET", `/v1/pods/${id}`, token)).json;
          return p.desired_state === "idle_stopped" && p.state === "stopped" ? true : undefined;
        },
        120_000,
        50,
      );
      const t0 = performance.now();
      // node:http, not fetch: fetch drops a Host header (a forbidden header there), so the edge saw 127.0.0.1
      const answer = await firstByte(d.edgePort, host);
      plat.push(performance.now() - t0); // the status line and headers arrived
      if (answer.status !== 200) throw new Error(`wake answered ${answer.status}: ${answer.body}`);

      await run("podman", ["stop", "-t", "0", name]);
      const b0 = performance.now();
      await run("podman", ["start", name]);
      const address = (await run("podman", ["port", name, "8080/tcp"])).stdout.trim().split("\n")[0]!;
      await until("bare answers", async () => ((await answers(address)) ? true : undefined));
      bare.push(performance.now() - b0);
      d.log(`wake ${i + 1}/${d.count}: platform ${Math.round(plat.at(-1)!)} ms, bare ${Math.round(bare.at(-1)!)} ms`);
    }
  } finally {
    await run("podman", ["rm", "-f", "-t", "0", name]).catch(() => null);
    await api("DELETE", `/v1/pods/${id}`, token).catch(() => null); // the platform may be gone: the caller cleans up
  }
  return [50, 95].map((q) => [
    `wake on request → first byte p${q} (n=${plat.length}; bare: podman start + first answer)`,
    ms(pct(plat, q)!),
    ms(pct(bare, q)!),
    `${(pct(plat, q)! / pct(bare, q)!).toFixed(2)}×`,
  ]);
}

/** GET / through the edge for `host`: resolves when the status line and headers arrive, with the body after. */
function firstByte(edgePort: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port: Number(edgePort), path: "/", headers: { host }, timeout: 90_000 });
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      if (status === 200) {
        res.resume();
        return resolve({ status, body: "" });
      }
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status, body: body.slice(0, 500) }));
    });
    req.on("timeout", () => req.destroy(new Error("no answer in 90 s")));
    req.on("error", reject);
  });
}
