import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { Browser, Page, Request } from "playwright-core";
import { call, signup, type TestApp } from "../helpers/app.js";
import { listeningApp } from "../clients/lib.js";
import { APPS_DOMAIN } from "../static/lib.js";
import { addMember } from "../orgs/lib.js";
import { haveChromium, launch, openPage, shot, signUp } from "./browser.js";

const PASSWORD = "correct horse battery";
const ORG = { "x-owner": "org" } as const;

/**
 * The console's organization pages in chromium: the owner creates an organization on /org and invites two
 * addresses (no SMTP_URL: each link is in the answer and shown); one invitee opens the link signed out, sees the
 * public preview, signs in through it and accepts; the other is in another organization, gets the 409 in words
 * and leaves it to join; a wrong account gets the 403 in words. Both appear in the owner's members list. Then the
 * context switch: a company static site created through the API with X-Owner: org is listed in the organization
 * context only, the choice survives a reload, and a site created from the console there is the organization's;
 * every section loads in that context with X-Owner: org on all but the personal calls; Korean at a phone's width;
 * the owner deletes the organization with its name typed.
 */
describe("console organization pages in chromium", { skip: haveChromium ? false : "chromium is not installed" }, () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let owner: { page: Page; errors: string[] };
  let ownerToken = "";
  const tag = randomBytes(3).toString("hex");
  const orgName = `Acme ${tag}`;
  const ownerEmail = `org-owner-${tag}@example.com`;
  const ada = `ada-${tag}@example.com`;
  const bob = `bob-${tag}@example.com`;
  const links = new Map<string, string>();

  const api = (
    method: "GET" | "POST" | "PATCH",
    url: string,
    token: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => call(t.app, { method, url, token, body, headers });
  /** The link as shown, on this test server's address (the platform builds it from PUBLIC_URL or localhost). */
  const localLink = (link: string) => `${t.baseUrl}/invite${new URL(link).search}`;
  const signIn = async (page: Page, email: string) => {
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
  };

  before(async () => {
    t = await listeningApp({ env: { APPS_DOMAIN } });
    ({ browser, close: closeBrowser } = await launch());
    owner = await openPage(browser, { acceptDialogs: true });
  });
  after(async () => {
    await closeBrowser?.();
    await t?.close();
  });

  test("the owner creates an organization on /org and invites two addresses; the links are shown", async () => {
    const { page } = owner;
    await signUp(page, t.baseUrl, ownerEmail, PASSWORD);
    ownerToken = (await api("POST", "/v1/auth/login", "", { email: ownerEmail, password: PASSWORD })).json().token;
    assert.equal(await page.getByTestId("context-switch").count(), 0, "no switch outside an organization");
    await page.getByRole("link", { name: "Organization" }).click();
    await page.getByText("You are not in an organization").waitFor();
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByText("This field is required.").waitFor();
    await page.getByLabel("Organization name").fill(orgName);
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByRole("heading", { name: orgName, level: 1 }).waitFor();
    await page.getByText(/Your role: Owner · 1 members/).waitFor();
    const me = page.getByTestId("org-members").locator(`tr[data-email="${ownerEmail}"]`);
    assert.equal(await me.getAttribute("data-role"), "owner");
    // the organization exists now: the header offers the switch
    await page.getByTestId("context-switch").waitFor();
    await page.getByText("No pending invitations.").waitFor();
    await shot(page, "100-org-created");

    await page.getByLabel("E-mail addresses").fill(`${ada}, not-an-address`);
    await page.getByRole("button", { name: "Send invitations" }).click();
    await page.getByText("not-an-address is not a valid e-mail address.").waitFor();
    await page.getByLabel("E-mail addresses").fill(`${ada}\n${bob}`);
    await page.getByRole("button", { name: "Send invitations" }).click();
    const results = page.getByTestId("invite-results");
    await results.waitFor();
    await results.getByText("This platform sends no mail").waitFor();
    for (const email of [ada, bob]) {
      const item = results.locator(`li[data-email="${email}"]`);
      assert.equal(await item.getAttribute("data-result"), "invited");
      const link = (await item.getByTestId("invite-link").textContent()) ?? "";
      assert.match(link, /\/invite\?token=[\w-]+$/);
      links.set(email, link);
    }
    // the pending list reloads with both
    await page.getByTestId("org-invites").locator(`tr[data-email="${bob}"]`).waitFor();
    assert.equal(await page.getByTestId("org-invites").locator("tbody tr").count(), 2);
    await shot(page, "101-org-invited");
    assert.deepEqual(owner.errors, []);
  });

  test("signed out, the link shows the preview; signing in through it comes back, and accepting joins", async () => {
    await signup(t.app, ada);
    const { page, errors } = await openPage(browser);
    await page.goto(localLink(links.get(ada)!));
    const preview = page.getByTestId("invite-preview");
    await preview.getByText(orgName).waitFor();
    await preview.getByText(ownerEmail).waitFor(); // the inviter, without a display name
    await preview.getByText("a***@example.com").waitFor();
    await preview.getByText("Member").waitFor();
    await preview.getByText("Waiting for your answer").waitFor();
    await shot(page, "102-invite-signed-out");
    await page.getByRole("link", { name: "Sign in to accept" }).click();
    await page.waitForURL(/\/signin\?next=/);
    await signIn(page, ada);
    await page.waitForURL(/\/invite\?token=/);
    await page.getByRole("button", { name: `Join ${orgName}` }).click();
    await page.waitForURL("**/org");
    await page.getByRole("heading", { name: orgName, level: 1 }).waitFor();
    await page.getByText(/Your role: Member/).waitFor();
    // a member: leaving offered, no invitations or settings
    await page.getByRole("heading", { name: "Leave organization" }).waitFor();
    assert.equal(await page.getByRole("heading", { name: "Invite" }).count(), 0);

    // the link again: used, and said so
    await page.goto(localLink(links.get(ada)!));
    await page.getByText("This invitation was accepted already.").waitFor();
    // bob's link with ada's account: 403 naming the invited address
    await page.goto(localLink(links.get(bob)!));
    await page.getByRole("button", { name: `Join ${orgName}` }).click();
    await page.getByText("This invitation is for b***@example.com").waitFor();
    await shot(page, "103-invite-wrong-account");
    assert.deepEqual(
      errors.filter((e) => e !== "console: status of 403: POST /v1/org/invites/accept"),
      [],
    );
  });

  test("a member of another organization gets the 409 in words and may leave it to join", async () => {
    // bob is a member of another organization (its owner made it; bob added as an accepted invitation would)
    const b = await signup(t.app, bob);
    const boss = await signup(t.app);
    const other = await api("POST", "/v1/org", boss.token, { name: `Other ${tag}` });
    assert.equal(other.statusCode, 201, other.body);
    await addMember(t, other.json().id, b, "member");

    const { page, errors } = await openPage(browser);
    await page.goto(localLink(links.get(bob)!));
    await page.getByRole("link", { name: "Sign in to accept" }).click();
    await signIn(page, bob);
    await page.waitForURL(/\/invite\?token=/);
    await page.getByText(`You are a member of Other ${tag}`).waitFor();
    await page.getByRole("button", { name: `Join ${orgName}` }).click();
    await page.getByText(/The account is in another organization/).waitFor();
    await shot(page, "104-invite-other-org");
    await page.getByRole("button", { name: `Leave Other ${tag} and join ${orgName}` }).click();
    await page.waitForURL("**/org");
    await page.getByRole("heading", { name: orgName, level: 1 }).waitFor();
    assert.deepEqual(errors, []);
  });

  test("both invitees appear in the owner's members list; the pending list is empty", async () => {
    const { page } = owner;
    await page.goto(`${t.baseUrl}/org`);
    const members = page.getByTestId("org-members");
    for (const email of [ownerEmail, ada, bob]) await members.locator(`tr[data-email="${email}"]`).waitFor();
    await page.getByText(/Your role: Owner · 3 members/).waitFor();
    await page.getByText("No pending invitations.").waitFor();
    await shot(page, "105-org-members");
    assert.deepEqual(owner.errors, []);
  });

  test("the context switch lists company sites in the organization context only, and creates them there", async () => {
    const { page } = owner;
    const company = await api("POST", "/v1/static", ownerToken, { name: "intranet", slug: `intra-${tag}` }, ORG);
    assert.equal(company.statusCode, 201, company.body);
    const personal = await api("POST", "/v1/static", ownerToken, { name: "blog", slug: `blog-${tag}` });
    assert.equal(personal.statusCode, 201, personal.body);

    await page.getByRole("link", { name: "Sites" }).click();
    await page.getByRole("link", { name: "blog", exact: true }).waitFor();
    assert.equal(await page.getByRole("link", { name: "intranet", exact: true }).count(), 0);
    assert.equal(await page.getByTestId("context-banner").count(), 0);

    await page.getByLabel("Working for").selectOption({ label: orgName });
    await page.getByTestId("context-banner").getByText(`Organization context: ${orgName}`).waitFor();
    await page.getByRole("link", { name: "intranet", exact: true }).waitFor();
    assert.equal(await page.getByRole("link", { name: "blog", exact: true }).count(), 0);
    await shot(page, "106-context-org");

    // kept across loads
    await page.reload();
    await page.getByRole("link", { name: "intranet", exact: true }).waitFor();
    assert.equal(await page.getByLabel("Working for").inputValue(), "org");

    // created here: the organization's
    await page.getByRole("link", { name: "Create site" }).click();
    await page.getByLabel("Name", { exact: true }).fill("handbook");
    await page.getByLabel("Address (optional)").fill(`hb-${tag}`);
    await page.getByRole("button", { name: "Create site" }).click();
    await page.waitForURL(`**/sites/hb-${tag}`);
    const slugs = async (headers?: Record<string, string>) =>
      ((await api("GET", "/v1/static", ownerToken, undefined, headers)).json() as { slug: string }[]).map(
        (s) => s.slug,
      );
    assert.deepEqual((await slugs(ORG)).sort(), [`hb-${tag}`, `intra-${tag}`]);
    assert.deepEqual(await slugs(), [`blog-${tag}`]);

    // back to personal from the banner: the detail page gives way to the list
    await page.getByRole("button", { name: "Back to personal" }).click();
    await page.waitForURL("**/sites");
    await page.getByRole("link", { name: "blog", exact: true }).waitFor();
    assert.equal(await page.getByRole("link", { name: "intranet", exact: true }).count(), 0);
    assert.equal(await page.evaluate(() => localStorage.getItem("platform.owner")), null);
    assert.deepEqual(owner.errors, []);
  });

  test("every section loads in the organization context; each call says X-Owner: org but the personal ones", async () => {
    const { page } = owner;
    const calls: { path: string; owner: string | undefined }[] = [];
    const record = (r: Request) => {
      const url = new URL(r.url());
      if (url.pathname.startsWith("/v1/")) calls.push({ path: url.pathname, owner: r.headers()["x-owner"] });
    };
    page.on("request", record);
    await page.getByLabel("Working for").selectOption("org");
    const sections: [string, string][] = [
      ["Apps", "Pods"],
      ["Buckets", "Buckets"],
      ["Domains", "Domains"],
      ["Databases", "Databases"],
      ["API keys", "API keys"],
      ["Billing", "Billing"],
      ["Account", "Account"],
      ["Organization", orgName],
    ];
    for (const [link, heading] of sections) {
      await page.getByRole("link", { name: link, exact: true }).click();
      await page.getByRole("heading", { name: heading, level: 1, exact: true }).waitFor();
      await page.getByTestId("context-banner").waitFor();
    }
    await page.waitForLoadState("networkidle");
    page.off("request", record);
    const personal = /^\/v1\/(me|auth|api-keys|org)(\/|$)/;
    const wrong = calls.filter((c) => (c.owner === "org") === personal.test(c.path));
    assert.deepEqual(wrong, [], "X-Owner: org on every call but the account's and the organization routes'");
    assert.ok(calls.some((c) => c.path === "/v1/databases" && c.owner === "org"));
    await page.getByLabel("Working for").selectOption("me");
    assert.deepEqual(owner.errors, []);
  });

  test("Korean at a phone's width: the switch in the menu, the band, the organization page", async () => {
    const { page } = owner;
    const locale = (l: string) => api("PATCH", "/v1/me", ownerToken, { locale: l });
    assert.equal((await locale("ko")).statusCode, 200);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${t.baseUrl}/org`);
    await page.getByText(/내 역할: 소유자 · 구성원 3명/).waitFor();
    await page.getByRole("button", { name: "메뉴" }).click();
    await page.getByLabel("작업 공간").selectOption("org");
    await page.getByTestId("context-banner").getByText(`조직 작업 공간: ${orgName}`).waitFor();
    await page.getByRole("heading", { name: "대기 중인 초대" }).waitFor();
    await shot(page, "107-org-ko-phone");
    await page.getByRole("button", { name: "개인으로 돌아가기" }).click();
    assert.equal(await page.getByTestId("context-banner").count(), 0);
    assert.equal((await locale("en")).statusCode, 200);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.reload();
    await page.getByRole("heading", { name: orgName, level: 1 }).waitFor();
    assert.deepEqual(owner.errors, []);
  });

  test("the owner deletes the organization with its name typed: the switch goes, the create form is back", async () => {
    const { page } = owner;
    await page.getByRole("link", { name: "Organization" }).click();
    await page.getByRole("heading", { name: orgName, level: 1 }).waitFor();
    await page.getByLabel(/Type .* to confirm/).fill("wrong");
    await page.getByRole("button", { name: "Delete organization" }).click();
    await page.getByText("Type the name exactly as shown.").waitFor();
    await page.getByLabel(/Type .* to confirm/).fill(orgName);
    await page.getByRole("button", { name: "Delete organization" }).click();
    await page.getByText("You are not in an organization").waitFor();
    assert.equal(await page.getByTestId("context-switch").count(), 0);
    // the company sites went back to their creator
    assert.equal((await api("GET", "/v1/static", ownerToken)).json().length, 3);
    assert.deepEqual(owner.errors, []);
  });
});
