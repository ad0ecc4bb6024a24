/**
 * `npm run bench:partner`: the edge's latency on a partner child's static site locked to a tenant (every request
 * carries a valid visitor cookie, so the lock's decision is made or found in the decision cache) against the same
 * site unlocked, in one run (issue 26). The rounds alternate (unlocked, locked, unlocked, locked) so drift on a
 * shared machine hits both alike; the figure is the locked/unlocked ratio of p50 and p99 over all rounds.
 *
 * The platform runs as `npm start` does (API, jobs and edge in one node process over its embedded PostgreSQL);
 * autocannon runs in this process. Settings: BENCH_DURATION (10 s per round), BENCH_WARMUP (2 s),
 * BENCH_CONNECTIONS (64), BENCH_ROUNDS (2 of each).
 *
 * Target (PASS/MISS, never failing the run): locked p50 and p99 within 10% of unlocked. Any non-2xx answer during a
 * measured round makes the run INVALID (exit 1): a locked round that redirects would measure nothing.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { create as tarCreate } from "tar";
import { envNumber, loadFromEnv, measure, type Sample } from "./lib/measure.js";
import { type Child, freePort, startPlatform } from "./lib/processes.js";
import { printTable } from "./lib/report.js";

const APPS_DOMAIN = "apps.bench.test";
const SLUG = "partner-bench";
const HOST = `${SLUG}.${APPS_DOMAIN}`;
const OPERATOR_TOKEN = randomBytes(24).toString("hex");
const MAX_RATIO = 1.1;
const load = loadFromEnv();
const ROUNDS = Math.round(envNumber("BENCH_ROUNDS", 2, 1));
const log = (msg: string) => console.log(msg);

const children: Child[] = [];
const tempDirs: string[] = [];
let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all(children.map((c) => c.stop()));
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => void cleanup().finally(() => process.exit(130)));

async function api(base: string, method: string, url: string, token: string | undefined, body?: unknown) {
  const res = await fetch(base + url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined && !Buffer.isBuffer(body) ? { "content-type": "application/json" } : {}),
      ...(Buffer.isBuffer(body) ? { "content-type": "application/gzip" } : {}),
    },
    body: body === undefined ? undefined : Buffer.isBuffer(body) ? new Uint8Array(body) : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

async function expect(base: string, method: string, url: string, status: number, token?: string, body?: unknown) {
  const r = await api(base, method, url, token, body);
  if (r.status !== status)
    throw new Error(`${method} ${url}: expected ${status}, got ${r.status}: ${JSON.stringify(r.json)}`);
  return r.json;
}

/** GET on the edge with the site's Host header: status, headers. */
function edgeGet(port: number, p: string, cookie?: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: "127.0.0.1", port, path: p, headers: { host: HOST, ...(cookie ? { cookie } : {}) }, agent: false },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res));
      },
    );
    req.on("error", reject);
  });
}

async function main(): Promise<void> {
  log(
    `partner lock benchmark: ${load.connections} connections, ${load.duration} s per round after ${load.warmup} s ` +
      `warm-up, ${ROUNDS} rounds each; node ${process.version}, ${availableParallelism()} cores ` +
      `(${cpus()[0]?.model ?? "?"}) shared by autocannon, the platform and PostgreSQL`,
  );
  if (loadavg()[0] > 1) log(`note: 1-minute load average is ${loadavg()[0].toFixed(2)}: the figures will be noisy`);
  const tmp = mkdtempSync(path.join(tmpdir(), "bench-partner-"));
  tempDirs.push(tmp);
  chmodSync(tmp, 0o755);
  // free ports are picked before the platform binds them: on a busy machine another process may take one first
  let edgePort = 0;
  let platform: Awaited<ReturnType<typeof startPlatform>> | null = null;
  for (let attempt = 1; !platform; attempt++) {
    edgePort = await freePort();
    platform = await startPlatform({
      dataDir: path.join(tmp, "data"),
      rateLimitRps: 10_000_000,
      // no HTTPS listener: 8443 may be held by another server on this machine
      env: { EDGE_PORT: String(edgePort), EDGE_TLS_PORT: "off", APPS_DOMAIN, OPERATOR_TOKEN },
    }).catch((err: Error) => {
      if (attempt >= 3 || !/in use/.test(err.message)) throw err;
      log(`start-up: ${err.message.split("\n")[1] ?? err.message}; again on other ports`);
      return null;
    });
  }
  children.push(platform.child);
  const base = platform.url;
  // the edge listens a moment after the API answers
  for (let i = 0; ; i++) {
    const up = await edgeGet(edgePort, "/").then(
      () => true,
      () => false,
    );
    if (up) break;
    if (i > 600) throw new Error(`the edge does not listen on ${edgePort}:\n${platform.child.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  // a partner, its key and login URL, a child with a tenant, the child's static site
  const partner = await expect(base, "POST", "/v1/auth/signup", 201, undefined, {
    email: `bench-partner-${Date.now()}@example.com`,
    password: "bench-password-0123456789",
  });
  const partnerId: string = partner.account.id;
  await expect(base, "PUT", `/v1/operator/partners/${partnerId}`, 200, OPERATOR_TOKEN, {});
  const key = (await expect(base, "POST", "/v1/api-keys", 201, partner.token, { name: "bench", scopes: ["partner:*"] }))
    .key;
  await expect(base, "PATCH", "/v1/partner", 200, key, { visitor_login_url: "http://localhost/login" });
  const child = await expect(base, "POST", "/v1/partner/users", 201, key, {
    external_ref: "bench-child",
    tenant_ref: "bench-tenant",
    token: { scopes: ["static:*"] },
  });
  const childToken: string = child.token.key;
  await expect(base, "POST", "/v1/static", 201, childToken, { name: SLUG, slug: SLUG });
  const dep = await expect(base, "POST", `/v1/static/${SLUG}/deployments`, 201, childToken, {});
  const src = path.join(tmp, "site");
  mkdirSync(src);
  writeFileSync(path.join(src, "index.html"), `<!doctype html><p>${"partner bench ".repeat(200)}</p>\n`);
  const archive = path.join(tmp, "site.tgz");
  await tarCreate({ gzip: true, file: archive, cwd: src, portable: true }, ["index.html"]);
  await expect(base, "PUT", `/v1/static/${SLUG}/deployments/${dep.id}/files`, 200, childToken, readFileSync(archive));
  await expect(base, "POST", `/v1/static/${SLUG}/deployments/${dep.id}/finalize`, 200, childToken);

  const access = (mode: string) => expect(base, "PUT", `/v1/partner/sites/${SLUG}/access`, 200, key, { mode });
  /** locks the site and signs a visitor in through a one-time link: the cookie */
  async function lockWithVisitor(): Promise<string> {
    await access("tenant");
    const link = await expect(base, "POST", "/v1/partner/visitor-sessions", 201, key, {
      subject_ref: "bench-visitor",
      tenant_ref: "bench-tenant",
      site: SLUG,
    });
    const u = new URL(link.url);
    const res = await edgeGet(edgePort, `${u.pathname}${u.search}`);
    const setCookie = String(res.headers["set-cookie"] ?? "");
    if (res.statusCode !== 302 || !setCookie) throw new Error(`visitor link answered ${res.statusCode}`);
    const cookie = setCookie.split(";")[0];
    // the lock is in force on the edge (its NOTIFY arrived): anonymous is redirected, the visitor served
    for (let i = 0; (await edgeGet(edgePort, "/")).statusCode !== 302; i++)
      if (i > 100) throw new Error("the edge did not follow the lock");
    if ((await edgeGet(edgePort, "/", cookie)).statusCode !== 200) throw new Error("the visitor is not served");
    return cookie;
  }

  const url = `http://127.0.0.1:${edgePort}/`;
  const unlocked: Sample[] = [];
  const locked: Sample[] = [];
  const rows: string[][] = [];
  const row = (label: string, s: Sample) =>
    rows.push([label, s.rps.toFixed(0), s.p50.toFixed(2), s.p99.toFixed(2), s.statusCodes]);
  let invalid = false;
  for (let round = 1; round <= ROUNDS; round++) {
    await access("none");
    for (let i = 0; (await edgeGet(edgePort, "/")).statusCode !== 200; i++)
      if (i > 100) throw new Error("the edge did not follow the unlock");
    const u = await measure(url, { host: HOST }, load);
    unlocked.push(u);
    row(`unlocked #${round}`, u);
    const cookie = await lockWithVisitor();
    const l = await measure(url, { host: HOST, cookie }, load);
    locked.push(l);
    row(`locked, visitor cookie #${round}`, l);
    invalid ||= [u, l].some((s) => s.non2xx > 0 || s.errors > 0 || s.timeouts > 0);
  }
  const mean = (xs: Sample[], f: (s: Sample) => number) => xs.reduce((a, s) => a + f(s), 0) / xs.length;
  const p50 = mean(locked, (s) => s.p50) / mean(unlocked, (s) => s.p50);
  const p99 = mean(locked, (s) => s.p99) / mean(unlocked, (s) => s.p99);
  const rps = mean(locked, (s) => s.rps) / mean(unlocked, (s) => s.rps);
  log("");
  printTable(["edge GET / (static site)", "rps", "p50 ms", "p99 ms", "status codes"], rows);
  log("");
  const verdict = (r: number) => (r <= MAX_RATIO ? "PASS" : "MISS");
  log(
    `locked / unlocked: p50 ${p50.toFixed(2)}× (≤ ${MAX_RATIO}: ${verdict(p50)}), p99 ${p99.toFixed(2)}× ` +
      `(≤ ${MAX_RATIO}: ${verdict(p99)}), rps ${rps.toFixed(2)}×`,
  );
  if (invalid) {
    log("INVALID: a measured round had non-2xx answers, errors or timeouts");
    process.exitCode = 1;
  }
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
