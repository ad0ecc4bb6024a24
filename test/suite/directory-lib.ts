/**
 * Fixtures of the directory part's tests: an app pointed at the fake suite, an organization linked to a suite
 * company by a plain suite_links row (the sign-in part, built in parallel, is not used) and suite members as accounts
 * with a suite_identities row, as a suite login would leave them.
 */
import assert from "node:assert/strict";
import { call, createTestApp, signup, type TestApp } from "../helpers/app.js";
import { startFakeSuite } from "../fakes/suite.js";
import { addMember, makeOrg, type Person, type TestOrg } from "../orgs/lib.js";
import { suiteDirectoryArea } from "../../src/suite/directory/module.js";
import type { FakeCompany } from "../fakes/suite-directory.js";

export const ISSUER = "https://suite.example.test";

export async function directoryApp(opts: { startJobs?: boolean } = {}) {
  const fake = await startFakeSuite();
  const t = await createTestApp({
    startJobs: opts.startJobs,
    env: {
      SUITE_ISSUER: ISSUER,
      SUITE_CLIENT_ID: "platform",
      SUITE_CLIENT_SECRET: "secret",
      SUITE_API_URL: fake.url,
      SUITE_API_TOKEN: fake.token,
      // the fake's own rate limit is what the 429 test turns on; the client's spacing is not under test here
      SUITE_API_RPS: "1000",
    },
  });
  return { t, fake, close: async () => (await t.close(), await fake.close()) };
}

export interface LinkedOrg extends TestOrg {
  company: string;
  directory: FakeCompany;
}

let companies = 0;

/** An organization linked to a fresh suite company, its owner a suite identity (subject `owner`). */
export async function linkedOrg(
  t: TestApp,
  fake: Awaited<ReturnType<typeof startFakeSuite>>,
  policy: { join_policy?: "all" | "departments" | "invite"; join_units?: string[] } = {},
): Promise<LinkedOrg> {
  const org = await makeOrg(t, { admins: 1, members: 1 });
  const company = `co-${process.pid}-${companies++}`;
  await t.db.query(
    `INSERT INTO suite_links (org_id, issuer, company_id, linked_by, join_policy, join_units, setup_done_at)
     VALUES ($1, $2, $3, $4, $5, $6, now())`,
    [org.id, ISSUER, company, org.owner.id, policy.join_policy ?? "all", policy.join_units ?? []],
  );
  await identify(t, company, org.owner, "owner");
  return { ...org, company, directory: fake.directory.company(company) };
}

/** Marks an account as the suite identity `subject` of the company. */
export async function identify(t: TestApp, company: string, who: Person, subject: string): Promise<void> {
  await t.db.query("UPDATE accounts SET sign_in = 'suite' WHERE id = $1", [who.id]);
  await t.db.query(
    "INSERT INTO suite_identities (account_id, issuer, company_id, subject, email) VALUES ($1, $2, $3, $4, $5)",
    [who.id, ISSUER, company, subject, who.email],
  );
}

/** A staff member who joined by suite login: an account, a member of the organization, a suite identity. */
export async function staff(t: TestApp, org: LinkedOrg, subject: string): Promise<Person> {
  const p = await signup(t.app);
  await addMember(t, org.id, p, "member");
  await identify(t, org.company, p, subject);
  return p;
}

export async function syncNow(t: TestApp, token: string, expected = 200) {
  const res = await call(t.app, { method: "POST", url: "/v1/org/suite/sync-departments", token });
  assert.equal(res.statusCode, expected, res.body);
  return res.json();
}

export const resultsOf = (answer: { items: { code: string; result: string }[] }) =>
  Object.fromEntries(answer.items.map((i) => [i.code, i.result]));

/** The directory part's jobs, as the platform defined them (tests run them directly). */
export function directoryJob(t: TestApp, name: string) {
  const jobs = suiteDirectoryArea.jobs!(t.platform, t.platform.state("suite-directory"));
  const job = jobs.find((j) => j.name === name);
  assert.ok(job, name);
  return job;
}
