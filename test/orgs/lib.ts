/**
 * Organization test fixtures: an organization made through the API by its owner, with admins and members added
 * straight into org_members (invitations have their own tests in invites.test.ts, which go through mail).
 */
import assert from "node:assert/strict";
import { call, signup, type TestApp } from "../helpers/app.js";

export interface Person {
  token: string;
  id: string;
  email: string;
}

export interface TestOrg {
  id: string;
  name: string;
  owner: Person;
  admins: Person[];
  members: Person[];
  /** someone in no organization */
  outsider: Person;
}

/** Adds an existing account to an organization with a role (and department), as an accepted invitation would. */
export async function addMember(
  t: TestApp,
  orgId: string,
  person: Person,
  role: "admin" | "member",
  departmentId: string | null = null,
): Promise<void> {
  await t.db.query("INSERT INTO org_members (org_id, account_id, role, department_id) VALUES ($1, $2, $3, $4)", [
    orgId,
    person.id,
    role,
    departmentId,
  ]);
}

export async function makeOrg(t: TestApp, opts: { admins?: number; members?: number; name?: string } = {}) {
  const owner = await signup(t.app);
  const name = opts.name ?? `Acme ${owner.id.slice(0, 6)}`;
  const res = await call(t.app, { method: "POST", url: "/v1/org", token: owner.token, body: { name } });
  assert.equal(res.statusCode, 201, res.body);
  const org: TestOrg = { id: res.json().id, name, owner, admins: [], members: [], outsider: await signup(t.app) };
  for (let i = 0; i < (opts.admins ?? 1); i++) {
    const p = await signup(t.app);
    await addMember(t, org.id, p, "admin");
    org.admins.push(p);
  }
  for (let i = 0; i < (opts.members ?? 1); i++) {
    const p = await signup(t.app);
    await addMember(t, org.id, p, "member");
    org.members.push(p);
  }
  return org;
}

/** Headers acting for the caller's organization (README, "Organizations": X-Owner). */
export const ORG = { "x-owner": "org" } as const;
