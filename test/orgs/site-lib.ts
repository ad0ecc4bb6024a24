/**
 * Company static sites behind the edge, for the site-visibility tests: an app with its edge on a free port, sites
 * created and deployed for the organization (X-Owner: org), edge requests with a member's session cookie, and the
 * department fixtures.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { randomUUID } from "node:crypto";
import { call, type TestApp } from "../helpers/app.js";
import { APPS_DOMAIN, get, staticApp, tarGz, type Answer, type StaticApp } from "../static/lib.js";
import type { OwnedResource } from "../../src/orgs/contract.js";
import { ORG, type Person } from "./lib.js";

/**
 * The edge app. Until the static area lists its sites for organizations itself (kernel.addOwned "site", another
 * part of issue 13), the tests hand the kernel a read-only listing of static_sites so deploy-control sees them.
 */
export async function orgSiteApp(env: Record<string, string> = {}): Promise<StaticApp> {
  return staticApp({ env }, (t) => {
    if (t.platform.kernel.all("owned").some((s) => s.kind === "site")) return;
    const row = (r: Record<string, any>): OwnedResource => ({
      kind: "site",
      id: r.id,
      name: r.name,
      slug: r.slug,
      owner: { kind: r.owner_kind, id: r.owner_id },
      accountId: r.account_id,
      state: "live",
      createdAt: r.created_at,
    });
    t.platform.kernel.contribute("owned", {
      kind: "site",
      list: async (q, owner) =>
        (
          await q.query(
            "SELECT * FROM static_sites WHERE owner_kind = $1 AND owner_id = $2 AND removed_at IS NULL ORDER BY slug",
            [owner.kind, owner.id],
          )
        ).rows.map(row),
      find: async (q, ref) =>
        (await q.query("SELECT * FROM static_sites WHERE id::text = $1 AND removed_at IS NULL", [ref])).rows.map(
          row,
        )[0] ?? null,
      reassign: async () => {
        throw new Error("not in these tests");
      },
    });
  });
}

/** A company site made and deployed by `by` (its responsible member), serving "<slug> content" at /. */
export async function companySite(t: TestApp, by: Person, slug: string): Promise<void> {
  const created = await call(t.app, {
    method: "POST",
    url: "/v1/static",
    token: by.token,
    headers: ORG,
    body: { name: slug, slug },
  });
  assert.equal(created.statusCode, 201, created.body);
  const dep = await call(t.app, {
    method: "POST",
    url: `/v1/static/${slug}/deployments`,
    token: by.token,
    headers: ORG,
  });
  assert.equal(dep.statusCode, 201, dep.body);
  const archive = await tarGz({ "index.html": `${slug} content`, "page.html": `${slug} page` });
  const up = await t.app.inject({
    method: "PUT",
    url: `/v1/static/${slug}/deployments/${dep.json().id}/files`,
    headers: { authorization: `Bearer ${by.token}`, "content-type": "application/gzip", ...ORG },
    payload: archive,
  });
  assert.equal(up.statusCode, 200, up.body);
  const fin = await call(t.app, {
    method: "POST",
    url: `/v1/static/${slug}/deployments/${dep.json().id}/finalize`,
    token: by.token,
    headers: ORG,
  });
  assert.equal(fin.statusCode, 200, fin.body);
}

/** An edge request for <slug>, with a person's session cookie (or none). */
export function visit(port: number, slug: string, who: Person | null, urlPath = "/"): Promise<Answer> {
  return get(port, slug, urlPath, { headers: who ? { cookie: `platform_session=${who.token}` } : {} });
}

/** Whether the visitor sees the content (200 with the site's page) rather than a sign-in or refusal page. */
export async function sees(port: number, slug: string, who: Person | null): Promise<boolean> {
  const res = await visit(port, slug, who);
  if (res.status === 200) {
    assert.equal(res.text, `${slug} content`);
    return true;
  }
  assert.ok(res.status === 401 || res.status === 403, `${res.status} ${res.text}`);
  assert.ok(!res.text.includes(`${slug} content`), "a refusal never carries the content");
  return false;
}

/** A department row of the organization (the departments area manages them; the tests insert them). */
export async function department(
  t: TestApp,
  orgId: string,
  code: string,
  opts: { parent?: string; approver?: string } = {},
): Promise<string> {
  const id = randomUUID();
  await t.db.query(
    "INSERT INTO org_departments (id, org_id, code, name, parent_id, approver_email) VALUES ($1, $2, $3, $4, $5, $6)",
    [id, orgId, code, `Dept ${code}`, opts.parent ?? null, opts.approver ?? null],
  );
  return id;
}

export async function moveTo(t: TestApp, person: Person, departmentId: string | null): Promise<void> {
  await t.db.query("UPDATE org_members SET department_id = $2 WHERE account_id = $1", [person.id, departmentId]);
}

export const access = (t: TestApp, who: Person, slug: string, visibility?: string) =>
  visibility === undefined
    ? call(t.app, { url: `/v1/org/sites/${slug}/access`, token: who.token })
    : call(t.app, { method: "PUT", url: `/v1/org/sites/${slug}/access`, token: who.token, body: { visibility } });

/** A form post to the edge for <slug> (the sign-in form). */
export function postForm(
  port: number,
  slug: string,
  urlPath: string,
  body: string,
  headers: http.OutgoingHttpHeaders = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        port,
        host: "127.0.0.1",
        method: "POST",
        path: urlPath,
        headers: {
          host: `${slug}.${APPS_DOMAIN}`,
          "content-type": "application/x-www-form-urlencoded",
          "content-length": Buffer.byteLength(body),
          ...headers,
        },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const b = Buffer.concat(chunks);
          resolve({ status: res.statusCode!, headers: res.headers, body: b, text: b.toString() });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
