/**
 * `npm run bench:suite`: the time from a suite enterprise admin's first sign-in to a staff member's first running
 * database, through the API (issue 27), as a company would go: the admin signs in with the suite (OpenID Connect
 * against a real oidc-provider), sets the join policy to `all` and finishes the setup; a staff member signs in (no
 * sign-up) and creates a database in the company context, billed through the suite; the clock stops when it is
 * `running`. The platform runs as `npm start` does (API, jobs and edge in one node process over its embedded
 * PostgreSQL); the suite's identity provider and its directory and metering APIs are the test fakes (test/fakes),
 * on loopback. BENCH_ROUNDS (3): each round is a new company, on the same platform.
 */
import { mkdtempSync, rmSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startSuiteIdp, CookieJar, type SuiteIdp } from "../test/fakes/suite-idp.js";
import { startFakeSuite } from "../test/fakes/suite.js";
import { envNumber } from "./lib/measure.js";
import { type Child, freePort, startPlatform } from "./lib/processes.js";
import { printTable } from "./lib/report.js";

const ROUNDS = Math.round(envNumber("BENCH_ROUNDS", 3, 1));
const CLIENT = { client_id: "platform-bench", client_secret: "platform-bench-secret" };
const log = (msg: string) => process.stderr.write(`${msg}\n`);

const root = mkdtempSync(path.join(tmpdir(), "bench-suite-"));
chmodSync(root, 0o755); // the embedded store's system user passes through
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const redirectUrl = `${base}/v1/auth/suite/callback`;
const idp = await startSuiteIdp({ clients: [{ ...CLIENT, redirect_uris: [redirectUrl] }] });
const suite = await startFakeSuite();
let platform: Child | null = null;

async function api(method: string, url: string, token: string, body?: unknown, owner?: "org") {
  const res = await fetch(base + url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(owner ? { "x-owner": owner } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => null)) as any;
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** A whole suite sign-in as a browser makes it (redirects with cookies), then the code exchanged for a session. */
async function signIn(id: SuiteIdp, sub: string): Promise<string> {
  id.loginAs = sub;
  const jar = new CookieJar();
  let url = `${base}/v1/auth/suite/start`;
  for (let hop = 0; !url.startsWith(redirectUrl); hop++) {
    if (hop > 12) throw new Error("the sign-in did not come back to the platform");
    const res = await fetch(url, { redirect: "manual", headers: { cookie: jar.header() } });
    jar.take(res);
    await res.body?.cancel();
    const location = res.headers.get("location");
    if (!location) throw new Error(`${url}: ${res.status} without a redirect`);
    url = new URL(location, url).href;
  }
  const done = await fetch(url, { headers: { accept: "application/json" } });
  const answer = (await done.json()) as any;
  if (done.status !== 200) throw new Error(`callback: ${done.status} ${JSON.stringify(answer)}`);
  const ex = await fetch(`${base}/v1/auth/suite/exchange`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code: answer.code }),
  });
  if (ex.status !== 200) throw new Error(`exchange: ${ex.status} ${await ex.text()}`);
  return ((await ex.json()) as any).token;
}

async function round(n: number) {
  const company = `bench-co-${n}`;
  const admin = { sub: `admin-${n}`, email: `admin@${company}.example` };
  const staff = { sub: `staff-${n}`, email: `dev@${company}.example` };
  for (const [p, isAdmin] of [
    [admin, true],
    [staff, false],
  ] as const) {
    idp.add({ ...p, name: p.sub, company_id: company, enterprise_admin: isAdmin, company_name: `Company ${n}` });
    suite.billing.setAllowance(company, p.sub, { limit: 1_000_000 });
  }
  suite.directory.company(company).units.push({ id: "eng", name: "Engineering" });
  suite.directory
    .company(company)
    .users.push(
      { userId: admin.sub, email: admin.email, units: ["eng"] },
      { userId: staff.sub, email: staff.email, units: ["eng"] },
    );

  const t0 = performance.now();
  const adminToken = await signIn(idp, admin.sub);
  const t1 = performance.now();
  await api("PUT", "/v1/org/suite/join-policy", adminToken, { policy: "all" });
  await api("POST", "/v1/org/suite/setup/finish", adminToken, {});
  const t2 = performance.now();
  const staffToken = await signIn(idp, staff.sub);
  const t3 = performance.now();
  const db = await api("POST", "/v1/databases", staffToken, { name: `first-${n}` }, "org");
  for (;;) {
    const got = await api("GET", `/v1/databases/${db.id}`, staffToken, undefined, "org");
    if (got.state === "running") break;
    if (got.state === "failed") throw new Error(`database failed: ${JSON.stringify(got)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const t4 = performance.now();
  return { admin: t1 - t0, setup: t2 - t1, staff: t3 - t2, database: t4 - t3, total: t4 - t0 };
}

try {
  log("starting the platform (embedded PostgreSQL is initialised on first start)...");
  platform = (
    await startPlatform({
      dataDir: path.join(root, "platform"),
      rateLimitRps: 1_000_000,
      port,
      env: {
        PUBLIC_URL: base,
        SUITE_ISSUER: idp.issuer,
        SUITE_CLIENT_ID: CLIENT.client_id,
        SUITE_CLIENT_SECRET: CLIENT.client_secret,
        SUITE_REDIRECT_URL: redirectUrl,
        SUITE_API_URL: suite.url,
        SUITE_API_TOKEN: suite.token,
        SUITE_API_RPS: "50",
      },
    })
  ).child;
  const rows: string[][] = [];
  const ms = (v: number) => `${Math.round(v)} ms`;
  for (let n = 1; n <= ROUNDS; n++) {
    const r = await round(n);
    log(`round ${n}: ${ms(r.total)}`);
    rows.push([String(n), ms(r.admin), ms(r.setup), ms(r.staff), ms(r.database), ms(r.total)]);
  }
  console.log(
    `\nsuite admin's first sign-in → staff member's first running database, through the API (${ROUNDS} companies):`,
  );
  printTable(["company", "admin sign-in", "policy + finish", "staff sign-in", "database → running", "total"], rows);
} finally {
  await platform?.stop();
  await idp.close();
  await suite.close();
  rmSync(root, { recursive: true, force: true });
}
