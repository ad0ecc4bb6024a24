import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { accountCalls } from "./account-helpers.js";

/** GET /v1/me/audit: every mutating request of the account, newest first, cursor-paged. */
describe("account: activity log", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });
  const { me, tokenId, audit } = accountCalls(() => t);

  describe("GET /v1/me/audit", () => {
    test("every mutating request is recorded with actor, token id, action, target, ip, status and time, failed ones included", async () => {
      const u = await signup(t.app);
      const sessionId = await tokenId(u.token);
      const key = await scopedKey(t.app, u.token, ["databases:read"]);
      const keyId = await tokenId(key);
      const start = Date.now() - 1000;

      const requests: {
        method: "PATCH" | "PUT" | "DELETE" | "POST";
        url: string;
        body?: unknown;
        token: string;
        status: number;
        action: string;
        target: string | null;
      }[] = [
        {
          method: "PATCH",
          url: "/v1/me",
          body: { display_name: "A" },
          token: u.token,
          status: 200,
          action: "updateMe",
          target: null,
        },
        {
          method: "PATCH",
          url: "/v1/me",
          body: { locale: "fr" },
          token: u.token,
          status: 400,
          action: "updateMe",
          target: null,
        },
        {
          method: "PUT",
          url: "/v1/me/app-spend-cap",
          body: { amount_krw: 1000 },
          token: u.token,
          status: 200,
          action: "setAppSpendCap",
          target: null,
        },
        {
          method: "DELETE",
          url: `/v1/api-keys/${randomUUID()}`,
          token: u.token,
          status: 404,
          action: "revokeApiKey",
          target: "",
        },
        {
          method: "PATCH",
          url: "/v1/me",
          body: { display_name: "B" },
          token: key,
          status: 403,
          action: "updateMe",
          target: null,
        },
        {
          method: "POST",
          url: "/v1/me/password",
          body: { current_password: "wrong password!", new_password: "another long one" },
          token: u.token,
          status: 403,
          action: "setPassword",
          target: null,
        },
        {
          method: "DELETE",
          url: `/v1/api-keys/${keyId}`,
          token: u.token,
          status: 204,
          action: "revokeApiKey",
          target: keyId,
        },
      ];
      for (const r of requests) {
        const res = await call(t.app, { method: r.method, url: r.url, body: r.body, token: r.token });
        assert.equal(res.statusCode, r.status, `${r.method} ${r.url}: ${res.body}`);
        if (r.target === "") r.target = r.url.split("/").pop()!;
      }
      // reads are not mutations and are not recorded
      await me(u.token);

      const items = (await audit(u.token)).items;
      // newest first; the key issue came first of all
      const expected = [
        { action: "createApiKey", status: 201, token: sessionId, target: null as string | null },
        ...requests.map((r) => ({
          action: r.action,
          status: r.status,
          token: r.token === key ? keyId : sessionId,
          target: r.target,
        })),
      ].reverse();
      assert.equal(items.length, expected.length, JSON.stringify(items, null, 1));
      for (const [i, want] of expected.entries()) {
        const row = items[i];
        assert.equal(row.actor, u.id);
        assert.equal(row.action, want.action, `row ${i}`);
        assert.equal(row.status, want.status, `row ${i} ${want.action}`);
        assert.equal(row.token_id, want.token, `row ${i} ${want.action}`);
        assert.equal(row.token_kind, want.token === keyId ? "scoped" : "full");
        assert.equal(row.target, want.target, `row ${i} ${want.action}`);
        assert.equal(row.ip, "127.0.0.1");
        const at = Date.parse(row.created_at);
        assert.ok(at >= start && at <= Date.now() + 1000, `time ${row.created_at}`);
        assert.equal(typeof row.id, "string");
      }
    });

    test("a mutation is in the log as soon as its response has arrived", async () => {
      const u = await signup(t.app);
      for (let i = 1; i <= 20; i++) {
        const res = await call(t.app, {
          method: "PATCH",
          url: "/v1/me",
          token: u.token,
          body: { display_name: `n${i}` },
        });
        assert.equal(res.statusCode, 200);
        assert.equal((await audit(u.token)).items.length, i, `after mutation ${i} its row is visible`);
      }
    });

    test("the recorded ip is the connection's, not a client-supplied X-Forwarded-For", async () => {
      const u = await signup(t.app);
      await call(t.app, {
        method: "PATCH",
        url: "/v1/me",
        token: u.token,
        body: { locale: "ko" },
        headers: { "x-forwarded-for": "203.0.113.7" },
      });
      const [row] = (await audit(u.token)).items;
      assert.equal(row.ip, "127.0.0.1");
    });

    test("the log shows only the caller's own account", async () => {
      const a = await signup(t.app);
      const b = await signup(t.app);
      await call(t.app, { method: "PATCH", url: "/v1/me", token: a.token, body: { display_name: "only a" } });
      assert.equal((await audit(a.token)).items.length, 1);
      assert.deepEqual((await audit(b.token)).items, []);
    });

    test("cursor pagination with ?limit=&cursor= returns every row exactly once, newest first", async () => {
      const u = await signup(t.app);
      for (let i = 0; i < 6; i++) {
        const res = await call(t.app, {
          method: "PATCH",
          url: "/v1/me",
          token: u.token,
          body: { display_name: `n${i}` },
        });
        assert.equal(res.statusCode, 200);
      }
      const all = await audit(u.token);
      assert.equal(all.items.length, 6);
      assert.equal(all.next_cursor, null);
      const allIds = all.items.map((r) => r.id);
      assert.deepEqual(
        [...allIds].sort((x, y) => Number(y) - Number(x)),
        allIds,
        "newest first",
      );

      for (const limit of [1, 2, 3, 4, 5, 6, 7]) {
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page: { items: any[]; next_cursor: string | null } = await audit(
            u.token,
            `limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
          );
          assert.ok(page.items.length <= limit);
          assert.ok(page.items.length > 0, `limit ${limit}: no empty page (${pages} pages so far)`);
          seen.push(...page.items.map((r) => r.id));
          cursor = page.next_cursor;
          pages++;
          assert.ok(pages <= 6, "pagination ends");
        } while (cursor);
        assert.deepEqual(seen, allIds, `limit ${limit}`);
        assert.equal(pages, Math.ceil(6 / limit), `limit ${limit}: page count`);
      }
    });

    test("rows added while paging do not shift pages: no row twice, none skipped", async () => {
      const u = await signup(t.app);
      for (let i = 0; i < 4; i++)
        await call(t.app, { method: "PATCH", url: "/v1/me", token: u.token, body: { display_name: `o${i}` } });
      const older = (await audit(u.token)).items.map((r) => r.id);
      assert.equal(older.length, 4);
      const first = await audit(u.token, "limit=2");
      for (let i = 0; i < 3; i++)
        await call(t.app, { method: "PATCH", url: "/v1/me", token: u.token, body: { display_name: `new${i}` } });
      assert.equal((await audit(u.token)).items.length, 7);
      const second = await audit(u.token, `limit=2&cursor=${first.next_cursor}`);
      assert.deepEqual(
        [...first.items, ...second.items].map((r) => r.id),
        older,
      );
      assert.equal(second.next_cursor, null);
    });

    test("a bad limit or cursor is 400, and GET /v1/me/audit is never itself recorded", async () => {
      const u = await signup(t.app);
      for (const q of ["limit=0", "limit=201", "limit=abc", "cursor=abc", "cursor=-1", "unknown=1"]) {
        expectError(await call(t.app, { url: `/v1/me/audit?${q}`, token: u.token }), 400, "invalid_request");
      }
      assert.deepEqual((await audit(u.token)).items, []);
      assert.equal((await audit(u.token, "limit=200")).items.length, 0);
      assert.equal((await audit(u.token, "")).next_cursor, null);
    });
  });
});
