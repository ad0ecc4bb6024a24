/**
 * Fixtures of the suite billing tests: the local fake suite (test/fakes/suite.ts) and a suite-billed organization as
 * the sign-in part leaves it after linking (billing_mode suite, a suite_links row, suite accounts with their
 * identities and sealed login tokens, the suite wallet), made in the store directly; sign-in has its own tests.
 */
import { randomUUID } from "node:crypto";
import { startFakeSuite } from "../fakes/suite.js";
import type { TestApp } from "../helpers/app.js";
import { makeOrg, type Person, type TestOrg } from "../orgs/lib.js";
import { startSuiteBilling } from "../../src/suite/billing/public.js";
import { ACCESS_TOKEN_COLUMN, REFRESH_TOKEN_COLUMN } from "../../src/suite/billing/repo.js";
import { requireSuite, suiteOf } from "../../src/suite/state.js";
import type { ReportDeps } from "../../src/suite/billing/reports.js";

export type FakeSuite = Awaited<ReturnType<typeof startFakeSuite>>;
export { startFakeSuite };

export const HOUR = 3_600_000;
export const CONTACT = "it-help@acme.example";

/** The platform's suite settings pointing at the fake (identity is another part's; its issuer is not called here). */
export const suiteEnv = (suite: FakeSuite): Record<string, string> => ({
  SUITE_ISSUER: suite.url,
  SUITE_CLIENT_ID: "platform",
  SUITE_CLIENT_SECRET: "platform-secret",
  SUITE_API_URL: suite.url,
  SUITE_API_TOKEN: suite.token,
  SUITE_API_RPS: "1000",
});

export interface SuiteOrg extends TestOrg {
  companyId: string;
  /** the suite user id (subject) of each person */
  subject: Map<string, string>;
}

/** A suite-billed organization, linked `linkedAgoMs` ago, every member a suite account with a valid login. */
export async function makeSuiteOrg(
  t: TestApp,
  suite: FakeSuite,
  opts: { members?: number; linkedAgoMs?: number; allowanceKrw?: number } = {},
): Promise<SuiteOrg> {
  const org = await makeOrg(t, { admins: 1, members: opts.members ?? 1 });
  const companyId = `co-${randomUUID().slice(0, 8)}`;
  await t.db.query("UPDATE orgs SET billing_mode = 'suite' WHERE id = $1", [org.id]);
  await t.db.query(
    `INSERT INTO suite_links (org_id, issuer, company_id, linked_by, setup_done_at, setup_done_by, created_at)
     VALUES ($1, $2, $3, $4, now(), $4, $5)`,
    [org.id, suite.url, companyId, org.owner.id, new Date(Date.now() - (opts.linkedAgoMs ?? 6 * HOUR))],
  );
  await startSuiteBilling(t.db, org.id);
  const subject = new Map<string, string>();
  for (const p of [org.owner, ...org.admins, ...org.members]) {
    const sub = `u-${p.id.slice(0, 8)}`;
    subject.set(p.id, sub);
    await t.db.query("UPDATE accounts SET sign_in = 'suite' WHERE id = $1", [p.id]);
    await t.db.query(
      `INSERT INTO suite_identities (account_id, issuer, company_id, subject, email, access_token_sealed,
          refresh_token_sealed, token_expires_at, last_login_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + interval '1 hour', now())`,
      [
        p.id,
        suite.url,
        companyId,
        sub,
        p.email,
        t.platform.secrets.seal(`access-${sub}`, ACCESS_TOKEN_COLUMN),
        t.platform.secrets.seal(`refresh-${sub}`, REFRESH_TOKEN_COLUMN),
      ],
    );
    suite.billing.setAllowance(companyId, sub, {
      limit: opts.allowanceKrw ?? 100_000,
      used: 0,
      resetsAt: "2030-01-01T00:00:00.000Z",
      contact: CONTACT,
    });
  }
  return { ...org, companyId, subject };
}

/** The report job's dependencies, as the platform's job builds them. */
export const reportDeps = (t: TestApp): ReportDeps => ({
  db: t.db,
  billing: requireSuite(suiteOf(t.platform)).billing,
  category: suiteOf(t.platform).config.billingCategory,
});

export const orgHeaders = { "x-owner": "org" } as const;
export type { Person };
