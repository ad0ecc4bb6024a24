/**
 * Partner postpaid billing (issue 26, src/partner/billing): a postpaid child deploys without balance; settlement of
 * child usage into the partner's wallet once per child and window across a killed settling process and concurrent
 * runs; monthly invoices with per-child statements and adjustment, missed months caught up once; usage periods;
 * 80%/100% limit mails and the operator's unpaid-invoice mail (real SMTP inbox), through HTTP and job runs.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { spawn } from "node:child_process";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { SMTPServer } from "smtp-server";
import { simpleParser } from "mailparser";
import { call, createTestApp, OPERATOR_TOKEN, scopedKey, signup, expectError, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { meterInterval, intervalStartOf } from "../../src/billing/metering/meter.js";
import { prices } from "../../src/billing/catalog.js";
import { walletFor } from "../../src/billing/ledger/ledger.js";
import type { MeteredResource, MeteringSource } from "../../src/kernel/contracts.js";
import { settleWindow } from "../../src/partner/billing/settle.js";
import { finalizeDue } from "../../src/partner/billing/invoices.js";
import { billingPass } from "../../src/partner/billing/index.js";

const STEP = prices().meter_interval_seconds * 1000;
const DAY = 86_400_000;
/** a gpu-h100 pod costs 9900 KRW an hour: exactly 825 KRW per 5-minute window */
const GPU_WINDOW_KRW = 825;
const MICRO = 1_000_000;
const OPERATOR_EMAIL = `operator-${process.pid}@platform.test`;

const mails: { to: string; subject: string }[] = [];
const inbox = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  onData(stream, session, callback) {
    simpleParser(stream)
      .then((m) => {
        for (const r of session.envelope.rcptTo) mails.push({ to: r.address.toLowerCase(), subject: m.subject ?? "" });
        callback();
      })
      .catch(callback);
  },
});

describe("partner postpaid billing", () => {
  let t: TestApp;

  const operator = (method: "GET" | "POST" | "PUT", url: string, body?: unknown) =>
    call(t.app, { method, url, token: OPERATOR_TOKEN, body });

  /** a postpaid partner with a monthly limit, its partner:* key and its children */
  async function postpaidPartner(limitKrw: number, children: number) {
    const account = await signup(t.app);
    const made = await operator("PUT", `/v1/operator/partners/${account.id}`, {
      billing_mode: "partner_postpaid",
      monthly_limit_krw: limitKrw,
    });
    assert.equal(made.statusCode, 200, made.body);
    const key = await scopedKey(t.app, account.token, ["partner:*"]);
    const kids: { id: string; token: string }[] = [];
    for (let i = 0; i < children; i++) {
      const res = await call(t.app, {
        method: "POST",
        url: "/v1/partner/users",
        token: key,
        body: { external_ref: `ext-${i}-${randomUUID()}`, token: { scopes: ["pods:*"] } },
      });
      assert.equal(res.statusCode, 201, res.body);
      kids.push({ id: res.json().id, token: res.json().token.key });
    }
    return { ...account, key, kids };
  }

  /** billing's own meter over GPU pods of the children (one each, `pods[i]` of child i), in one window */
  async function meter(childIds: string[], windowStart: Date, podsPerChild: number[] = childIds.map(() => 1)) {
    const rows: MeteredResource[] = childIds.flatMap((id, i) =>
      Array.from({ length: podsPerChild[i] }, () => ({
        id: randomUUID(),
        owner: { kind: "partner_child" as const, id },
        accountId: id,
        kind: "pod",
        size: "gpu-h100",
        storageGb: 0,
        state: "running" as const,
      })),
    );
    const source: MeteringSource = {
      kind: "pod",
      billable: async (_q, page) => (page.after ? [] : rows),
      billableOf: async () => [],
    };
    await meterInterval(t.db, [source], windowStart);
  }

  const scalar = async (sql: string, params: unknown[]) =>
    Number(Object.values((await t.db.query(sql, params)).rows[0])[0]);
  const walletBalance = (kind: string, id: string) =>
    scalar("SELECT balance FROM ledger_wallets WHERE owner_kind = $1 AND owner_id = $2 AND currency = 'KRW'", [
      kind,
      id,
    ]);

  before(async () => {
    await new Promise<void>((resolve) => inbox.listen(0, "127.0.0.1", resolve));
    const port = (inbox.server.address() as AddressInfo).port;
    t = await createTestApp({
      env: { SMTP_URL: `smtp://127.0.0.1:${port}`, OPERATOR_EMAIL, APPS_ALLOW_LOCAL_IMAGES: "1" },
    });
  });
  after(async () => {
    await t?.close();
    await new Promise<void>((resolve) => inbox.close(() => resolve()));
  });

  test("a postpaid child deploys a paid pod with no balance", async () => {
    const image = await testImage("TEST_IMAGE_HTTPD_V1");
    const p = await postpaidPartner(100_000, 1);
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token: p.kids[0].token,
      body: { name: `pp${randomUUID().slice(0, 8)}`, image, size: "micro" },
    });
    assert.equal(res.statusCode, 201, res.body);
    const del = await call(t.app, { method: "DELETE", url: `/v1/pods/${res.json().id}`, token: p.kids[0].token });
    assert.ok(del.statusCode < 300, del.body);
  });

  test("settlement: a process killed inside a window and concurrent runs charge each child once per window", async () => {
    const p = await postpaidPartner(10_000_000, 2);
    const [a, b] = p.kids.map((k) => k.id);
    // windows three days back: settled by nobody else (the due-window catch-up reaches one day back)
    const w = [0, 1, 2].map((i) => new Date(intervalStartOf(new Date(Date.now() - 3 * DAY)).getTime() + i * STEP));
    for (const at of w) await meter([a, b], at, [1, 2]);

    // the crash: a real settling process that wrote its rows and waits for the partner wallet the test holds is
    // killed with SIGKILL; its server session ends and its transaction rolls back
    const partnerWallet = await walletFor(t.db, { kind: "partner", id: p.id }, "KRW");
    const holder = new pg.Client({ connectionString: t.url });
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM ledger_wallets WHERE id = $1 FOR UPDATE", [partnerWallet.id]);
    const worker = spawn(process.execPath, ["--import", "tsx", "test/partner/settle-worker.ts"], {
      env: { PATH: process.env.PATH!, DATABASE_URL: t.url, WINDOW: w[0].toISOString() },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    worker.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise((resolve) => worker.on("exit", resolve));
    // the lock table, not the activity view (whose state can lag), says who waits for the wallet
    const waiter = async () =>
      (await holder.query<{ pid: number }>("SELECT pid FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid()"))
        .rows[0]?.pid;
    for (let i = 0; !(await waiter()); i++) {
      assert.ok(i < 1200, `the settling process never reached the partner wallet ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(
      await scalar("SELECT count(*) FROM partner_settlements WHERE partner_id = $1", [p.id]),
      0,
      "uncommitted rows are invisible",
    );
    worker.kill("SIGKILL");
    await exited;
    // released, the dead process's session finishes the statement it had, finds its client gone and rolls back;
    // until then it holds the window's lock, so the runs below wait for it
    await holder.query("ROLLBACK");
    await holder.end();
    assert.equal(await scalar("SELECT count(*) FROM partner_settlements WHERE partner_id = $1", [p.id]), 0);

    // the window again, twice at once, and the others twice at once
    await Promise.all([...w, ...w].map((at) => settleWindow(t.db, at)));

    for (const [child, pods] of [
      [a, 1],
      [b, 2],
    ] as const) {
      const keys = await t.db.query<{ idempotency_key: string }>(
        "SELECT idempotency_key FROM ledger_transactions WHERE idempotency_key LIKE $1 ORDER BY 1",
        [`partner-settle:${child}:%`],
      );
      assert.deepEqual(
        keys.rows.map((r) => r.idempotency_key),
        w.map((at) => `partner-settle:${child}:${at.toISOString()}`),
      );
      // the child's usage moved to the partner whole: its postpaid wallet is back at 0
      assert.equal(await walletBalance("partner_child", child), 0);
      assert.equal(
        await scalar("SELECT sum(amount_krw) FROM partner_settlements WHERE child_id = $1", [child]),
        3 * pods * GPU_WINDOW_KRW,
      );
    }
    assert.equal(await walletBalance("partner", p.id), -9 * GPU_WINDOW_KRW);

    // usage per child through the API, the window's month
    const usage = await call(t.app, {
      url: `/v1/partner/usage?period=${w[0].toISOString().slice(0, 7)}`,
      token: p.key,
    });
    assert.equal(usage.statusCode, 200, usage.body);
    assert.equal(usage.json().total_micro, 9 * GPU_WINDOW_KRW * MICRO);
    assert.deepEqual(
      usage
        .json()
        .children.map((c: { child_id: string; usage_micro: number }) => [c.child_id, c.usage_micro])
        .sort(),
      [
        [a, 3 * GPU_WINDOW_KRW * MICRO],
        [b, 6 * GPU_WINDOW_KRW * MICRO],
      ].sort(),
    );
    for (const bad of ["2026-13", "2026-1", "nov", "2026-11-01"])
      expectError(await call(t.app, { url: `/v1/partner/usage?period=${bad}`, token: p.key }), 400, "invalid_request");
  });

  test("invoices: missed months finalized once each, statements minus adjustment equal the total; operator sees and is mailed unpaid ones", async () => {
    const p = await postpaidPartner(10_000_000, 2);
    const [a, b] = p.kids.map((k) => k.id);
    const now = new Date();
    const monthsAgo = (n: number) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - n, 1));
    // usage two months ago and last month; the platform was "down" on both 1sts: no invoice yet
    await meter([a, b], new Date(monthsAgo(2).getTime() + 12 * STEP), [1, 2]);
    await meter([a], new Date(monthsAgo(1).getTime() + 12 * STEP));
    await settleWindow(t.db, new Date(monthsAgo(2).getTime() + 12 * STEP));
    await settleWindow(t.db, new Date(monthsAgo(1).getTime() + 12 * STEP));
    // a reduction of 1000 KRW before finalization: the first invoice subtracts it
    const adj = await operator("POST", `/v1/operator/partners/${p.id}/adjustments`, {
      amount_krw: 1000,
      reason: "outage credit",
    });
    assert.equal(adj.statusCode, 201, adj.body);

    // two job runs and two finalizations at once
    await Promise.all([billingPass(t.platform, now), finalizeDue(t.db, now), billingPass(t.platform, now)]);
    await billingPass(t.platform, now);

    const list = await call(t.app, { url: "/v1/partner/invoices", token: p.key });
    assert.equal(list.statusCode, 200, list.body);
    const invoices = list.json().invoices as any[];
    assert.deepEqual(
      invoices.map((i) => i.month),
      [monthsAgo(1), monthsAgo(2)].map((d) => d.toISOString().slice(0, 7)),
    );
    const expected = new Map([
      [invoices[1].id, { usage: 3 * GPU_WINDOW_KRW, adjustment: 1000 }],
      [invoices[0].id, { usage: GPU_WINDOW_KRW, adjustment: 0 }],
    ]);
    for (const inv of invoices) {
      const one = await call(t.app, { url: `/v1/partner/invoices/${inv.id}`, token: p.key });
      assert.equal(one.statusCode, 200, one.body);
      const body = one.json();
      const sum = body.statements.reduce((s: number, l: { usage_micro: number }) => s + l.usage_micro, 0);
      assert.equal(sum, expected.get(inv.id)!.usage * MICRO);
      assert.equal(body.adjustment_microusd, expected.get(inv.id)!.adjustment * MICRO);
      assert.equal(sum - body.adjustment_microusd, body.total_micro);
      assert.equal(body.status, "unpaid");
    }
    // another partner's invoice is not found
    const other = await postpaidPartner(1000, 0);
    expectError(
      await call(t.app, { url: `/v1/partner/invoices/${invoices[0].id}`, token: other.key }),
      404,
      "not_found",
    );

    // the operator: the unpaid list, one mail per unpaid invoice, a recorded payment
    const unpaid = await operator("GET", "/v1/operator/partner-invoices?status=unpaid");
    assert.equal(unpaid.statusCode, 200, unpaid.body);
    const ours = (unpaid.json().invoices as any[]).filter((i) => i.partner_id === p.id);
    assert.equal(ours.length, 2);
    const toOperator = mails.filter(
      (m) => m.to === OPERATOR_EMAIL && invoices.some((i) => m.subject.includes(i.month)),
    );
    assert.equal(toOperator.length, 2, JSON.stringify(mails));
    const paid = await operator("POST", `/v1/operator/partner-invoices/${invoices[0].id}/paid`);
    assert.equal(paid.statusCode, 200, paid.body);
    assert.equal(paid.json().status, "paid");
    await operator("POST", `/v1/operator/partner-invoices/${invoices[0].id}/paid`);
    assert.equal(
      await walletBalance("partner", p.id),
      -4 * GPU_WINDOW_KRW + 1000 + GPU_WINDOW_KRW,
      "settled usage, the reduction and one payment",
    );
    expectError(await call(t.app, { url: "/v1/operator/partner-invoices", token: p.key }), 401);
  });

  test("limit mails at 80% and 100% of the monthly limit, once each", async () => {
    // 2000 KRW: one window (825) is 41%, two 82%, three 123%
    const p = await postpaidPartner(2000, 1);
    const child = p.kids[0].id;
    const base = intervalStartOf(new Date(Date.now() - 2 * DAY)).getTime();
    const toPartner = () => mails.filter((m) => m.to === p.email.toLowerCase()).map((m) => m.subject);
    const expectMails = async (n: number) => {
      for (let i = 0; toPartner().length < n && i < 50; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(toPartner().length, n, JSON.stringify(toPartner()));
    };
    for (let i = 0; i < 3; i++) {
      const at = new Date(base + i * STEP);
      await meter([child], at);
      await settleWindow(t.db, at);
      await Promise.all([billingPass(t.platform), billingPass(t.platform)]);
      await billingPass(t.platform);
      await expectMails([0, 1, 2][i]);
    }
    assert.match(toPartner()[0], /^80% /);
    assert.match(toPartner()[1], /^100% /);
  });
});
