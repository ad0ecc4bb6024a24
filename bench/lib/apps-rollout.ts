/**
 * bench:apps, issue 29's two figures, in a function of their own: rollout time to a new healthy version beside
 * bare podman (start the new container, wait until it answers), and requests lost through the edge under steady
 * load during those rollouts (target 0). Each rollout is a new release (env changed) of a fresh pod.
 */
import { execFile } from "node:child_process";
import http from "node:http";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { ms, pct } from "./report.js";

const run = promisify(execFile);

export interface RolloutBenchDeps {
  api: (method: string, url: string, token?: string, body?: unknown) => Promise<{ status: number; json: any }>;
  until: <T>(what: string, fn: () => Promise<T | undefined>, timeoutMs?: number, everyMs?: number) => Promise<T>;
  answers: (address: string) => Promise<boolean>;
  token: string;
  image: string;
  edgePort: string;
  log: (msg: string) => void;
  /** rollouts measured (BENCH_ROLLOUTS) */
  count: number;
  /** concurrent clients of the steady load through the edge */
  clients?: number;
}

/** Runs the rollouts, bare and platform interleaved; returns the table rows (figure, platform, bare, ratio). */
export async function rolloutFigures(d: RolloutBenchDeps): Promise<string[][]> {
  const { api, until, answers, token, image } = d;

  async function platformRollout(i: number): Promise<{ took: number; lost: number; total: number }> {
    const res = await api("POST", "/v1/pods", token, { name: `bench-roll-${i}`, image, port: 8080 });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.json)}`);
    const id = res.json.id as string;
    const host = new URL(res.json.url).hostname;
    await until("running", async () =>
      (await api("GET", `/v1/pods/${id}`, token)).json.state === "running" ? true : undefined,
    );
    // node:http, not fetch: fetch drops a Host header given by hand, and the edge routes by it
    const agent = new http.Agent({ keepAlive: true, maxSockets: d.clients ?? 4 });
    const viaEdge = () =>
      new Promise<boolean>((resolve) => {
        const req = http.get(
          { host: "127.0.0.1", port: Number(d.edgePort), path: "/", headers: { host }, agent, timeout: 10_000 },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode === 200));
            res.on("error", () => resolve(false));
          },
        );
        req.on("timeout", () => req.destroy(new Error("timeout")));
        req.on("error", () => resolve(false));
      });
    await until("served by the edge", async () => ((await viaEdge()) ? true : undefined));
    let stop = false;
    let [lost, total] = [0, 0];
    const load = Promise.all(
      Array.from({ length: d.clients ?? 4 }, async () => {
        while (!stop && total < 50_000) {
          total++;
          if (!(await viaEdge())) lost++;
        }
      }),
    );
    const t0 = performance.now();
    const patched = await api("PATCH", `/v1/pods/${id}`, token, { env: { RELEASE: String(i) } });
    const gen = patched.json.generation as number;
    await until("the new version serving", async () => {
      const p = (await api("GET", `/v1/pods/${id}`, token)).json;
      return p.serving_generation === gen && p.state === "running" && (await answers(p.address)) ? true : undefined;
    });
    const took = performance.now() - t0;
    // the old replica drained and gone: the requests of the whole switch are counted
    await until("the old replica gone", async () => {
      const cs = JSON.parse(
        (await run("podman", ["ps", "-a", "--filter", `label=platform.pod=${id}`, "--format", "json"])).stdout || "[]",
      );
      return cs.length === 1 ? true : undefined;
    });
    stop = true;
    await load;
    agent.destroy();
    await api("DELETE", `/v1/pods/${id}`, token);
    return { took, lost, total };
  }

  /** bare podman: start the new container, wait until it answers, remove the old one (no traffic switch at all) */
  async function bareRollout(i: number): Promise<number> {
    const name = `bench-bare-roll-${process.pid}-${i}`;
    const args = ["run", "-d", "--runtime", "runc", "--ulimit", "nofile=20000:20000", "--ulimit", "nproc=20000:20000"];
    await run("podman", [...args, "--name", `${name}-a`, "-p", "127.0.0.1::8080", image]);
    const t0 = performance.now();
    await run("podman", [...args, "--name", `${name}-b`, "-e", `RELEASE=${i}`, "-p", "127.0.0.1::8080", image]);
    const address = (await run("podman", ["port", `${name}-b`, "8080/tcp"])).stdout.trim().split("\n")[0]!;
    await until("bare answers", async () => ((await answers(address)) ? true : undefined));
    const took = performance.now() - t0;
    await run("podman", ["rm", "-f", "-t", "0", `${name}-a`, `${name}-b`]);
    return took;
  }

  const plat: number[] = [];
  const bare: number[] = [];
  let [lost, total] = [0, 0];
  for (let i = 0; i < d.count; i++) {
    bare.push(await bareRollout(i));
    const r = await platformRollout(i);
    plat.push(r.took);
    [lost, total] = [lost + r.lost, total + r.total];
    d.log(
      `rollout ${i + 1}/${d.count}: platform ${Math.round(r.took)} ms (lost ${r.lost}/${r.total}), bare ${Math.round(bare.at(-1)!)} ms`,
    );
  }
  const row = (p: number) => [
    `rollout → new version serving p${p} (n=${d.count})`,
    ms(pct(plat, p)!),
    ms(pct(bare, p)!),
    `${(pct(plat, p)! / pct(bare, p)!).toFixed(2)}×`,
  ];
  return [
    row(50),
    row(95),
    [`requests lost during rollouts (target 0)`, `${lost} of ${total}`, "no traffic switch", ""],
  ];
}
