/**
 * Departments through HTTP: the CSV upload (text/csv or {csv}; parents above children, mistakes named by line), the
 * JSON sync by code (insert, update, skip, delete; idempotent; implicit_deletion), PUT upsert by code, cycles refused,
 * DELETE (members unassigned, children moved up), the deploy block and the block each department inherits, and who
 * may call what.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, scopedKey, type TestApp } from "../helpers/app.js";
import { makeOrg, type TestOrg } from "./lib.js";

let t: TestApp;
let org: TestOrg;

before(async () => {
  t = await createTestApp();
  org = await makeOrg(t, { admins: 1, members: 1 });
});
after(async () => t?.close());

const admin = () => org.admins[0].token;
const csv = (token: string, text: string, url = "/v1/org/departments/csv") =>
  call(t.app, { method: "POST", url, token, headers: { "content-type": "text/csv" }, body: text });
const sync = (token: string, departments: object[], implicit_deletion?: boolean) =>
  call(t.app, {
    method: "POST",
    url: "/v1/org/departments/sync",
    token,
    body: implicit_deletion === undefined ? { departments } : { departments, implicit_deletion },
  });
const put = (token: string, code: string, body: object) =>
  call(t.app, { method: "PUT", url: `/v1/org/departments/${encodeURIComponent(code)}`, token, body });
const list = async (token = admin()) => {
  const res = await call(t.app, { url: "/v1/org/departments", token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().items as Record<string, any>[];
};
const byCode = async () => new Map((await list()).map((d) => [d.code, d]));

describe("departments", () => {
  test("CSV: text/csv with a header, quoted fields, BOM and CRLF; parents first in GET; {csv} again is all skip", async () => {
    const text =
      "\uFEFFcode,name,parent_code,approver_email\r\n" +
      "CSV-HQ,Head office,,Boss@Example.com\r\n" +
      '\r\nCSV-ENG,"Engineering, all of it",CSV-HQ,\r\n' +
      'CSV-WEB,"Web\nteam",CSV-ENG,\r\n' +
      "CSV-OPS,Ops,CSV-HQ,ops@example.com\r\n";
    const res = await csv(admin(), text);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().counts, { insert: 4, update: 0, skip: 0, delete: 0 });
    assert.deepEqual(
      res.json().items.map((i: any) => [i.code, i.result, i.line]),
      [
        ["CSV-HQ", "insert", 2],
        ["CSV-ENG", "insert", 4],
        ["CSV-WEB", "insert", 5],
        ["CSV-OPS", "insert", 7],
      ],
    );
    const items = (await list()).filter((d) => d.code.startsWith("CSV-"));
    assert.deepEqual(
      items.map((d) => d.code),
      ["CSV-HQ", "CSV-ENG", "CSV-WEB", "CSV-OPS"],
    );
    const web = items.find((d) => d.code === "CSV-WEB")!;
    assert.equal(web.name, "Web\nteam");
    assert.equal(web.parent_code, "CSV-ENG");
    assert.equal(items[0].approver_email, "boss@example.com");
    const again = await call(t.app, {
      method: "POST",
      url: "/v1/org/departments/csv",
      token: admin(),
      body: { csv: text },
    });
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(again.json().counts, { insert: 0, update: 0, skip: 4, delete: 0 });
    // a parent already in the chart and not in the file is fine; a file never deletes
    const child = await csv(admin(), "code,name,parent_code\nCSV-QA,QA,CSV-ENG\n");
    assert.deepEqual(child.json().counts, { insert: 1, update: 0, skip: 0, delete: 0 });
  });

  test("CSV mistakes are 400 invalid_request naming the line; a text/plain body is 415", async () => {
    const childFirst = await csv(admin(), "code,name,parent_code\nX-ROOT,Root,\nX-CHILD,Child,X-PARENT\nX-PARENT,P,\n");
    expectError(childFirst, 400, "invalid_request");
    assert.match(
      childFirst.json().error.message,
      /^line 3: parent_code X-PARENT is not defined above \(it is on line 4\)/,
    );
    const nowhere = await csv(admin(), "code,name,parent_code\nX-A,A,NOPE\n");
    assert.match(nowhere.json().error.message, /^line 2: parent_code NOPE is not defined above/);
    const cases: [string, RegExp][] = [
      ["X-A,A,\n", /^line 1: the header row must name the columns/],
      ["code,name,colour\nX-A,A,red\n", /^line 1: unknown column "colour"/],
      ["code,name\nX-A,\n", /^line 2: name is empty/],
      ["code,name\n\nX-A,A,extra\n", /^line 3: 3 fields, but the header names 2 columns/],
      ["code,name,parent_code,approver_email\nX-A,A,,not-mail\n", /^line 2: approver_email "not-mail"/],
      ["code,name\nX-A,A\nX-A,B\n", /^line 3: code X-A appears twice \(first on line 2\)/],
      ['code,name\nX-A,"A\n', /^line 2: Quote Not Closed/],
      ["", /^The CSV is empty/],
    ];
    for (const [text, message] of cases) {
      const res = await csv(admin(), text);
      expectError(res, 400, "invalid_request");
      assert.match(res.json().error.message, message, text);
    }
    assert.equal((await list()).filter((d) => d.code.startsWith("X-")).length, 0, "nothing of a refused file stays");
    const plain = await call(t.app, {
      method: "POST",
      url: "/v1/org/departments/csv",
      token: admin(),
      headers: { "content-type": "text/plain" },
      body: "code,name\nX-A,A\n",
    });
    expectError(plain, 415, "unsupported_media_type");
  });

  test("PUT upserts by code: 201, then 200 with changes; an unknown parent is 400", async () => {
    const created = await put(admin(), "PUT-A", { name: "A", approver_email: "Lead@Example.com" });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().code, "PUT-A");
    assert.equal(created.json().approver_email, "lead@example.com");
    const child = await put(admin(), "PUT-B", { name: "B", parent_code: "PUT-A" });
    assert.equal(child.statusCode, 201, child.body);
    assert.equal(child.json().parent_id, created.json().id);
    const renamed = await put(admin(), "PUT-A", { name: "A renamed" });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json().name, "A renamed");
    assert.equal(renamed.json().approver_email, null, "PUT is the whole state: an omitted approver is none");
    assert.equal(renamed.json().id, created.json().id);
    const unknown = await put(admin(), "PUT-C", { name: "C", parent_code: "PUT-NOPE" });
    expectError(unknown, 400, "invalid_request");
    assert.match(unknown.json().error.message, /parent_code PUT-NOPE/);
    expectError(await put(admin(), " PUT-D", { name: "D" }), 400, "invalid_request");
  });

  test("cycles are refused: a parent that is the department itself or its descendant (PUT and sync)", async () => {
    await sync(admin(), [
      { code: "CY-1", name: "1" },
      { code: "CY-2", name: "2", parent_code: "CY-1" },
      { code: "CY-3", name: "3", parent_code: "CY-2" },
    ]);
    const res = await put(admin(), "CY-1", { name: "1", parent_code: "CY-3" });
    expectError(res, 400, "invalid_request");
    assert.match(res.json().error.message, /cycle: CY-\d → CY-\d → CY-\d → CY-\d/);
    expectError(await put(admin(), "CY-1", { name: "1", parent_code: "CY-1" }), 400, "invalid_request");
    const viaSync = await sync(admin(), [
      { code: "CY-1", name: "1", parent_code: "CY-2" },
      { code: "CY-2", name: "2", parent_code: "CY-1" },
    ]);
    expectError(viaSync, 400, "invalid_request");
    const viaCsv = await csv(admin(), "code,name,parent_code\nCY-1,1,CY-3\n");
    expectError(viaCsv, 400, "invalid_request");
    assert.match(viaCsv.json().error.message, /^line 2: the parents form a cycle/);
    assert.equal((await byCode()).get("CY-1")!.parent_id, null, "the chart is unchanged");
  });

  test("DELETE: members become unassigned, sub-departments move under the deleted one's parent; by id or code", async () => {
    await sync(admin(), [
      { code: "DEL-TOP", name: "Top" },
      { code: "DEL-MID", name: "Mid", parent_code: "DEL-TOP" },
      { code: "DEL-LOW", name: "Low", parent_code: "DEL-MID" },
      { code: "DEL-GONE", name: "Gone" },
    ]);
    const mid = (await byCode()).get("DEL-MID")!;
    await t.db.query("UPDATE org_members SET department_id = $1 WHERE account_id = $2", [mid.id, org.members[0].id]);
    assert.equal((await byCode()).get("DEL-MID")!.member_count, 1);
    const res = await call(t.app, { method: "DELETE", url: `/v1/org/departments/${mid.id}`, token: admin() });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { deleted: true, code: "DEL-MID", members_unassigned: 1, children_moved: 1 });
    const members = await call(t.app, { url: "/v1/org/members", token: admin() });
    assert.equal(members.json().items.find((m: any) => m.id === org.members[0].id).department_id, null);
    const chart = await byCode();
    assert.equal(chart.get("DEL-LOW")!.parent_code, "DEL-TOP");
    assert.equal(chart.has("DEL-MID"), false);
    const byName = await call(t.app, { method: "DELETE", url: "/v1/org/departments/DEL-GONE", token: admin() });
    assert.equal(byName.statusCode, 200, byName.body);
    expectError(
      await call(t.app, { method: "DELETE", url: `/v1/org/departments/${mid.id}`, token: admin() }),
      404,
      "not_found",
    );
  });

  test("deploy policy: stored on the department, inherited by its sub-departments in GET", async () => {
    await sync(admin(), [
      { code: "DP-A", name: "A" },
      { code: "DP-B", name: "B", parent_code: "DP-A" },
      { code: "DP-C", name: "C", parent_code: "DP-B" },
      { code: "DP-D", name: "D" },
    ]);
    const a = (await byCode()).get("DP-A")!;
    const patch = (ref: string, deploy_blocked: boolean) =>
      call(t.app, {
        method: "PATCH",
        url: `/v1/org/departments/${ref}/deploy-policy`,
        token: admin(),
        body: { deploy_blocked },
      });
    const res = await patch(a.id, true);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().deploy_blocked, true);
    assert.equal(res.json().deploy_blocked_by, "DP-A");
    let chart = await byCode();
    for (const code of ["DP-B", "DP-C"]) {
      assert.equal(chart.get(code)!.deploy_blocked, false);
      assert.equal(chart.get(code)!.effective_deploy_blocked, true, code);
      assert.equal(chart.get(code)!.deploy_blocked_by, "DP-A");
    }
    assert.equal(chart.get("DP-D")!.effective_deploy_blocked, false);
    const c = await patch("DP-C", true);
    assert.equal(c.json().deploy_blocked_by, "DP-C", "its own block is the nearest");
    await patch("DP-A", false);
    chart = await byCode();
    assert.equal(chart.get("DP-B")!.effective_deploy_blocked, false);
    assert.equal(chart.get("DP-C")!.effective_deploy_blocked, true);
    // the chart's sources never touch the block
    await sync(admin(), [{ code: "DP-C", name: "C renamed", parent_code: "DP-B" }]);
    assert.equal((await byCode()).get("DP-C")!.deploy_blocked, true);
  });

  test("JSON sync: insert, update, skip, delete; any order; the same call twice is all skip", async () => {
    // a chart of its own: the organization's other departments would be deleted by implicit_deletion
    const other = await makeOrg(t, { admins: 1, members: 0 });
    const token = other.admins[0].token;
    const first = [
      { code: "S-LEAF", name: "Leaf", parent_code: "S-MID" },
      { code: "S-MID", name: "Mid", parent_code: "S-ROOT" },
      { code: "S-ROOT", name: "Root", approver_email: "root@example.com" },
      { code: "S-OLD", name: "Old" },
    ];
    const r1 = await sync(token, first);
    assert.equal(r1.statusCode, 200, r1.body);
    assert.deepEqual(r1.json().counts, { insert: 4, update: 0, skip: 0, delete: 0 });
    const second = [
      { code: "S-ROOT", name: "Root", approver_email: "ROOT@example.com" },
      { code: "S-MID", name: "Middle", parent_code: "S-ROOT" },
      { code: "S-LEAF", name: "Leaf", parent_code: "S-ROOT" },
      { code: "S-NEW", name: "New", parent_code: "S-LEAF" },
    ];
    const r2 = await sync(token, second, true);
    assert.equal(r2.statusCode, 200, r2.body);
    assert.deepEqual(
      r2.json().items.map((i: any) => `${i.code}:${i.result}`),
      ["S-ROOT:skip", "S-MID:update", "S-LEAF:update", "S-NEW:insert", "S-OLD:delete"],
    );
    assert.deepEqual(r2.json().counts, { insert: 1, update: 2, skip: 1, delete: 1 });
    const r3 = await sync(token, second, true);
    assert.deepEqual(r3.json().counts, { insert: 0, update: 0, skip: 4, delete: 0 });
    const items = (await call(t.app, { url: "/v1/org/departments", token })).json().items;
    assert.deepEqual(
      items.map((d: any) => `${d.code}<${d.parent_code ?? ""}`),
      ["S-ROOT<", "S-LEAF<S-ROOT", "S-NEW<S-LEAF", "S-MID<S-ROOT"],
    );
    const missing = await sync(token, [{ code: "S-X", name: "X", parent_code: "S-ROOT" }], true);
    expectError(missing, 400, "invalid_request");
    assert.match(missing.json().error.message, /parent_code S-ROOT is not in the list/);
  });

  test("a whole HR export in one request: 12,000 departments over the platform's 1 MiB body limit", async () => {
    const other = await makeOrg(t, { admins: 1, members: 0 });
    const departments = Array.from({ length: 12_000 }, (_, i) => ({
      code: `BIG-${i}`,
      name: `Department number ${i} of the large organization, with a long name`,
      parent_code: i === 0 ? null : `BIG-${Math.floor((i - 1) / 10)}`,
    }));
    assert.ok(JSON.stringify({ departments }).length > 1024 * 1024);
    const res = await sync(other.admins[0].token, departments.reverse());
    assert.equal(res.statusCode, 200, res.body.slice(0, 500));
    assert.equal(res.json().counts.insert, 12_000);
    const again = await sync(other.admins[0].token, departments);
    assert.equal(again.json().counts.skip, 12_000);
    // the same chart as a raw text/csv body of more than 1 MiB, parents first
    const text = `code,name,parent_code\n${departments
      .reverse()
      .map((d) => `${d.code},"${d.name} (csv)",${d.parent_code ?? ""}`)
      .join("\n")}\n`;
    assert.ok(text.length > 1024 * 1024);
    const viaCsv = await csv(other.admins[0].token, text);
    assert.equal(viaCsv.statusCode, 200, viaCsv.body.slice(0, 500));
    assert.equal(viaCsv.json().counts.update, 12_000);
  });

  test("who may: members read, writes are admins' (403 forbidden_role), outsiders get 404, scopes apply", async () => {
    const member = org.members[0].token;
    assert.equal((await call(t.app, { url: "/v1/org/departments", token: member })).statusCode, 200);
    expectError(await sync(member, []), 403, "forbidden_role");
    expectError(await csv(member, "code,name\nM-A,A\n"), 403, "forbidden_role");
    expectError(await put(member, "M-A", { name: "A" }), 403, "forbidden_role");
    expectError(
      await call(t.app, { method: "DELETE", url: "/v1/org/departments/CSV-HQ", token: member }),
      403,
      "forbidden_role",
    );
    expectError(
      await call(t.app, {
        method: "PATCH",
        url: "/v1/org/departments/CSV-HQ/deploy-policy",
        token: member,
        body: { deploy_blocked: true },
      }),
      403,
      "forbidden_role",
    );
    const outsider = org.outsider.token;
    expectError(await call(t.app, { url: "/v1/org/departments", token: outsider }), 404, "not_found");
    expectError(await sync(outsider, []), 404, "not_found");
    expectError(await put(outsider, "O-A", { name: "A" }), 404, "not_found");
    const readKey = await scopedKey(t.app, org.admins[0].token, ["org:read"]);
    assert.equal((await call(t.app, { url: "/v1/org/departments", token: readKey })).statusCode, 200);
    expectError(await sync(readKey, []), 403, "scope_insufficient");
    const writeKey = await scopedKey(t.app, org.admins[0].token, ["org:write"]);
    const withKey = await sync(writeKey, [{ code: "KEY-A", name: "By key" }]);
    assert.equal(withKey.statusCode, 200, withKey.body);
  });
});
