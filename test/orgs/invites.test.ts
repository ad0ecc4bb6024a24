/**
 * Invitations by e-mail through HTTP and a real SMTP inbox (smtp-server on 127.0.0.1): several at once, one mail
 * per address with its link (not in the answer), the public preview, acceptance only by the invited address,
 * expired, withdrawn and used links refused, renewal, leave_current, concurrency; without SMTP_URL the link is in
 * the answer.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { simpleParser } from "mailparser";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { makeOrg, type TestOrg } from "./lib.js";

interface Mail {
  to: string;
  subject: string;
  text: string;
}

const mails: Mail[] = [];
const inbox = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  // the inbox refuses reject-* addresses, as a mail server refuses an unknown mailbox
  onRcptTo(a, _session, callback) {
    callback(
      a.address.startsWith("reject-") ? Object.assign(new Error("no such mailbox"), { responseCode: 550 }) : undefined,
    );
  },
  onData(stream, session, callback) {
    simpleParser(stream)
      .then((m) => {
        for (const r of session.envelope.rcptTo)
          mails.push({ to: r.address.toLowerCase(), subject: m.subject ?? "", text: m.text ?? "" });
        callback();
      })
      .catch(callback);
  },
});

const PUBLIC_URL = "https://console.orgs.test";
let t: TestApp;
let org: TestOrg;
let n = 0;
const address = (tag: string) => `${tag}-${process.pid}-${n++}@invitee.test`;

/** The token of the latest invitation mail to `to`. */
function tokenFor(to: string): string {
  const mail = mails.filter((m) => m.to === to).at(-1);
  assert.ok(mail, `a mail reached ${to}`);
  const m = /https:\/\/console\.orgs\.test\/invite\?token=([A-Za-z0-9_-]{43})/.exec(mail.text);
  assert.ok(m, `the mail to ${to} carries the link: ${mail.text}`);
  return m[1];
}

const invite = (token: string, body: object) => call(t.app, { method: "POST", url: "/v1/org/invites", token, body });
const accept = (token: string, inviteToken: string, leave_current?: boolean) =>
  call(t.app, { method: "POST", url: "/v1/org/invites/accept", token, body: { token: inviteToken, leave_current } });
const preview = (inviteToken: string) =>
  call(t.app, { url: `/v1/org/invites/preview?token=${encodeURIComponent(inviteToken)}` });

/** Invites one address (as the owner) and returns its mailed token. */
async function invited(email: string, extra: object = {}, by = org.owner.token): Promise<string> {
  const res = await invite(by, { invites: [{ email, ...extra }] });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().items[0].result, "invited", res.body);
  return tokenFor(email);
}

before(async () => {
  await new Promise<void>((resolve) => inbox.listen(0, "127.0.0.1", resolve));
  const port = (inbox.server.address() as AddressInfo).port;
  t = await createTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, PUBLIC_URL, MAIL_FROM: "org@orgs.test" } });
  org = await makeOrg(t, { admins: 1, members: 1 });
  await t.db.query("INSERT INTO org_departments (id, org_id, code, name) VALUES ($1, $2, 'eng', 'Engineering')", [
    randomUUID(),
    org.id,
  ]);
});
after(async () => {
  await t?.close();
  await new Promise<void>((resolve) => inbox.close(() => resolve()));
});

describe("invitations by e-mail", () => {
  test("several addresses in one call: one mail each with its link, none in the answer; listed as pending", async () => {
    const [a, b, c] = [address("a"), address("b"), address("c")];
    const res = await invite(org.owner.token, {
      invites: [{ email: a }, { email: b.toUpperCase(), role: "admin" }, { email: c, department_code: "eng" }],
    });
    assert.equal(res.statusCode, 200, res.body);
    const items = res.json().items;
    assert.deepEqual(
      items.map((i: { email: string; result: string }) => [i.email, i.result]),
      [
        [a, "invited"],
        [b, "invited"],
        [c, "invited"],
      ],
    );
    assert.ok(
      items.every((i: object) => !("link" in i)),
      "with SMTP the link travels by mail only",
    );
    assert.equal(items[1].invite.role, "admin");
    assert.equal(items[2].invite.department_code, "eng");
    const expires = new Date(items[0].invite.expires_at).getTime() - Date.now();
    assert.ok(Math.abs(expires - 7 * 24 * 3600 * 1000) < 60_000, "valid 7 days");
    const tokens = [a, b, c].map(tokenFor);
    assert.equal(new Set(tokens).size, 3);
    const mail = mails.find((m) => m.to === a)!;
    assert.match(mail.subject, new RegExp(org.name));
    assert.match(mail.text, /as member/);

    const list = await call(t.app, { url: "/v1/org/invites", token: org.admins[0].token });
    assert.equal(list.statusCode, 200, list.body);
    const pending = list.json().items.map((i: { email: string }) => i.email);
    for (const e of [a, b, c]) assert.ok(pending.includes(e), e);
    // the token is stored as its hash only
    const { rows } = await t.db.query("SELECT count(*)::int AS n FROM org_invites WHERE token_hash = $1", [
      Buffer.from(tokens[0]),
    ]);
    assert.equal(rows[0].n, 0);
  });

  test("a mail the server refuses: that address fails and nothing stays pending for it; the others go", async () => {
    const [bad, good] = [address("reject-me"), address("fine")];
    const res = await invite(org.owner.token, { emails: [bad, good] });
    assert.equal(res.statusCode, 200, res.body);
    const [first, second] = res.json().items;
    assert.equal(first.result, "failed");
    assert.match(first.reason, /could not be sent/);
    assert.equal(first.invite.status, "withdrawn");
    assert.equal(second.result, "invited");
    tokenFor(good);
    const pending = (await call(t.app, { url: "/v1/org/invites", token: org.owner.token })).json().items;
    assert.ok(!pending.some((i: { email: string }) => i.email === bad));
  });

  test("preview is public: organization, inviter, role, masked address, status; unknown tokens are 404", async () => {
    const email = address("preview");
    const token = await invited(email, { department_code: "eng" });
    const res = await preview(token);
    assert.equal(res.statusCode, 200, res.body);
    const p = res.json();
    assert.equal(p.org_name, org.name);
    assert.equal(p.inviter, org.owner.email);
    assert.equal(p.role, "member");
    assert.equal(p.status, "pending");
    assert.equal(p.department_name, "Engineering");
    assert.equal(p.email, `p***@invitee.test`);
    expectError(await preview("x".repeat(43)), 404, "not_found");
    expectError(await call(t.app, { url: "/v1/org/invites/preview" }), 400);
  });

  test("accept: another account gets 403, the invited address joins with role and department, once", async () => {
    const email = address("joiner");
    const token = await invited(email, { role: "admin", department_code: "eng" });
    const stranger = await signup(t.app);
    const wrong = await accept(stranger.token, token);
    expectError(wrong, 403, "forbidden_role");
    assert.match(wrong.json().error.message, /j\*\*\*@invitee\.test/);

    const joiner = await signup(t.app, email);
    const res = await accept(joiner.token, token);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().org.id, org.id);
    assert.equal(res.json().org.role, "admin");
    assert.equal(res.json().left, null);
    const members = (await call(t.app, { url: "/v1/org/members", token: joiner.token })).json().items;
    const me = members.find((m: { id: string }) => m.id === joiner.id);
    assert.equal(me.role, "admin");
    assert.equal(me.department_code, "eng");

    expectError(await accept(joiner.token, token), 409, "conflict");
    assert.equal((await preview(token)).json().status, "accepted");
    // a member is not invited again
    const again = await invite(org.owner.token, { emails: [email, email] });
    assert.deepEqual(
      again.json().items.map((i: { result: string }) => i.result),
      ["skipped", "skipped"],
    );
  });

  test("expired invitations are refused (409) and listed as expired; inviting again renews with a new link", async () => {
    const email = address("late");
    const token = await invited(email);
    await t.db.query("UPDATE org_invites SET expires_at = now() - interval '1 minute' WHERE lower(email) = $1", [
      email,
    ]);
    const person = await signup(t.app, email);
    const res = await accept(person.token, token);
    expectError(res, 409, "conflict");
    assert.match(res.json().error.message, /expired/);
    assert.equal((await preview(token)).json().status, "expired");
    const listed = (await call(t.app, { url: "/v1/org/invites", token: org.owner.token })).json().items;
    assert.equal(listed.find((i: { email: string }) => i.email === email).expired, true);

    const renewed = await invite(org.owner.token, { emails: [email], role: "member" });
    assert.equal(renewed.json().items[0].result, "renewed", renewed.body);
    const fresh = tokenFor(email);
    assert.notEqual(fresh, token);
    expectError(await preview(token), 404, "not_found");
    assert.equal((await accept(person.token, fresh)).statusCode, 200);
  });

  test("withdrawn invitations are refused; withdrawing is pending-only and admin-only", async () => {
    const email = address("withdrawn");
    const token = await invited(email);
    const { id } = await findInvite(email);
    const del = (who: string, which = id) =>
      call(t.app, { method: "DELETE", url: `/v1/org/invites/${which}`, token: who });
    expectError(await del(org.members[0].token), 403, "forbidden_role");
    expectError(await del(org.outsider.token), 404, "not_found");
    const res = await del(org.admins[0].token);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, "withdrawn");
    expectError(await del(org.admins[0].token), 409, "conflict");
    expectError(await del(org.admins[0].token, randomUUID()), 404, "not_found");
    expectError(await del(org.admins[0].token, "nope"), 404, "not_found");
    assert.equal((await preview(token)).json().status, "withdrawn");
    const person = await signup(t.app, email);
    expectError(await accept(person.token, token), 409, "conflict");
  });

  test("roles: admins invite members only, members and outsiders cannot invite, bad departments are 400", async () => {
    const admin = org.admins[0].token;
    expectError(await invite(admin, { invites: [{ email: address("x"), role: "admin" }] }), 403, "forbidden_role");
    const ok = await invite(admin, { emails: [address("by-admin")] });
    assert.equal(ok.json().items[0].result, "invited", ok.body);
    expectError(await invite(org.members[0].token, { emails: [address("m")] }), 403, "forbidden_role");
    expectError(await invite(org.outsider.token, { emails: [address("o")] }), 404, "not_found");
    expectError(
      await invite(admin, { invites: [{ email: address("d"), department_code: "nope" }] }),
      400,
      "unknown_department",
    );
    expectError(await invite(admin, { emails: [] }), 400);
    expectError(await invite(admin, {}), 400, "invalid_request");
    expectError(await invite(admin, { emails: ["not-an-address"] }), 400);
    const many = Array.from({ length: 51 }, (_, i) => `many${i}@invitee.test`);
    expectError(await invite(admin, { emails: many }), 400);
  });

  test("leave_current: a member of another organization joins only with it; that organization's owner never", async () => {
    const other = await makeOrg(t, { admins: 0, members: 1 });
    const moving = other.members[0];
    const token = await invited(moving.email);
    expectError(await accept(moving.token, token), 409, "conflict");
    const res = await accept(moving.token, token, true);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().left.org_id, other.id);
    assert.equal(res.json().org.id, org.id);
    const now = (await call(t.app, { url: "/v1/org", token: moving.token })).json();
    assert.equal(now.id, org.id);

    const ownerToken = await invited(other.owner.email);
    const refused = await accept(other.owner.token, ownerToken, true);
    expectError(refused, 409, "conflict");
    assert.match(refused.json().error.message, /owns another organization/);
    assert.equal((await call(t.app, { url: "/v1/org", token: other.owner.token })).json().id, other.id);
  });

  test("two members swapping organizations at once both arrive (the organizations are locked in one order)", async () => {
    const [x, y] = [await makeOrg(t, { admins: 0, members: 1 }), await makeOrg(t, { admins: 0, members: 1 })];
    const [toY, toX] = [
      await invited(x.members[0].email, {}, y.owner.token),
      await invited(y.members[0].email, {}, x.owner.token),
    ];
    const [a, b] = await Promise.all([accept(x.members[0].token, toY, true), accept(y.members[0].token, toX, true)]);
    assert.equal(a.statusCode, 200, a.body);
    assert.equal(b.statusCode, 200, b.body);
    assert.equal((await call(t.app, { url: "/v1/org", token: x.members[0].token })).json().id, y.id);
    assert.equal((await call(t.app, { url: "/v1/org", token: y.members[0].token })).json().id, x.id);
  });

  test("two accepts of one link at once make one membership", async () => {
    const email = address("race");
    const token = await invited(email);
    const person = await signup(t.app, email);
    const results = await Promise.all([accept(person.token, token), accept(person.token, token)]);
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 409]);
    const { rows } = await t.db.query("SELECT count(*)::int AS n FROM org_members WHERE account_id = $1", [person.id]);
    assert.equal(rows[0].n, 1);
  });
});

async function findInvite(email: string): Promise<{ id: string }> {
  const list = (await call(t.app, { url: "/v1/org/invites", token: org.owner.token })).json().items;
  const found = list.find((i: { email: string }) => i.email === email);
  assert.ok(found, email);
  return found;
}

describe("invitations without SMTP_URL", () => {
  let local: TestApp;
  before(async () => {
    local = await createTestApp({ env: { PUBLIC_URL: "https://console.local.test/" } });
  });
  after(async () => local?.close());

  test("the answer carries each link, which works", async () => {
    const o = await makeOrg(local, { admins: 0, members: 0 });
    const email = `nosmtp-${process.pid}@invitee.test`;
    const res = await call(local.app, {
      method: "POST",
      url: "/v1/org/invites",
      token: o.owner.token,
      body: { emails: [email, `other-${process.pid}@invitee.test`] },
    });
    assert.equal(res.statusCode, 200, res.body);
    const [first, second] = res.json().items;
    assert.match(first.link, /^https:\/\/console\.local\.test\/invite\?token=[A-Za-z0-9_-]{43}$/);
    assert.ok(second.link && second.link !== first.link);
    const token = new URL(first.link).searchParams.get("token")!;
    const person = await signup(local.app, email);
    const ok = await call(local.app, {
      method: "POST",
      url: "/v1/org/invites/accept",
      token: person.token,
      body: { token },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().org.role, "member");
  });
});
