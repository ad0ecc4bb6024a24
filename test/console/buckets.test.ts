import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { ListBucketsCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import type { Browser, Page } from "playwright-core";
import { call, type TestApp } from "../helpers/app.js";
import { listeningApp } from "../clients/lib.js";
import type { BucketsState } from "../../src/buckets/module.js";
import { haveChromium, launch, shot, watchErrors } from "./browser.js";

/** What an S3 call was refused with (the S3 error code), or null when it went through. */
async function s3Refusal(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
    return null;
  } catch (err) {
    const e = err as { name: string; Code?: string };
    return e.Code ?? e.name;
  }
}

/**
 * The console's buckets in chromium: create a bucket (a bad name is refused in the page first), the list with its
 * endpoint, a read_write access key for it issued in the page (secret read from the page, shown once), an upload
 * with the AWS SDK against the endpoint the page shows, the size on the bucket's page, deletion refused while it
 * holds objects (409 in words) and forced, the key revoked (the gateway refuses it), Korean at a phone's width.
 */
describe("console buckets in chromium", { skip: haveChromium ? false : "chromium is not installed" }, () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let errors: string[];
  let token = "";
  let s3: S3Client;
  const name = `photos-${randomBytes(3).toString("hex")}`;
  const email = `buckets-${Date.now()}@example.com`;
  const password = "correct horse battery";
  const body = "hello from the console test, ".repeat(40);

  before(async () => {
    t = await listeningApp({ startJobs: true, env: { S3_PORT: "0" } });
    assert.ok(t.platform.state<BucketsState>("buckets").gateway.address, "the S3 gateway listens");
    ({ browser, close: closeBrowser } = await launch());
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US" });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: t.baseUrl });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on("dialog", (d) => void d.accept()); // the revoke confirmation
    errors = watchErrors(page);
  });
  after(async () => {
    s3?.destroy();
    await closeBrowser?.();
    await t?.close();
  });

  test("sign up, open Buckets: the empty state; a bad name is refused in words before anything is sent", async () => {
    await page.goto(`${t.baseUrl}/signup`);
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL("**/databases");
    token = (await call(t.app, { method: "POST", url: "/v1/auth/login", body: { email, password } })).json().token;
    await page.getByRole("link", { name: "Buckets", exact: true }).click();
    await page.getByRole("heading", { name: "Buckets", level: 1 }).waitFor();
    await page.getByText("No buckets yet").waitFor();
    await shot(page, "90-buckets-empty");

    const input = page.getByLabel("Name", { exact: true });
    const posts: string[] = [];
    page.on("request", (r) => r.method() === "POST" && r.url().endsWith("/v1/buckets") && posts.push(r.url()));
    await input.fill("My_Photos");
    await page.getByRole("button", { name: "Create bucket" }).click();
    await page.getByText("Use only lowercase letters, digits, dots (.) and hyphens (-).").waitFor();
    await input.fill("-photos");
    await page.getByRole("button", { name: "Create bucket" }).click();
    await page.getByText("Begin and end the name with a letter or a digit.").waitFor();
    await input.fill("xn--photos");
    await page.getByRole("button", { name: "Create bucket" }).click();
    await page.getByText("The name must not begin with xn-- (reserved by S3).").waitFor();
    assert.equal(await input.getAttribute("aria-invalid"), "true");
    await shot(page, "91-bucket-name-invalid");
    assert.deepEqual(posts, [], "nothing was sent for the bad names");

    await input.fill(name);
    await page.getByRole("button", { name: "Create bucket" }).click();
    await page.waitForURL(`**/buckets/${name}`);
    await page.getByRole("heading", { name, level: 1 }).waitFor();
  });

  test("the list shows the bucket with its endpoint, region and size", async () => {
    await page.getByRole("link", { name: "← Buckets" }).click();
    const row = page.locator(`tr[data-bucket='${name}']`);
    await row.waitFor();
    const endpoint = (await row.getByTestId("endpoint").textContent())!;
    assert.equal(endpoint, t.platform.state<BucketsState>("buckets").endpoint());
    await row.getByText("us-east-1").waitFor();
    await row.getByText("0 objects").waitFor();
    await shot(page, "92-buckets-list");
  });

  test("a read_write key for the bucket: the secret is shown once and works with the AWS SDK", async () => {
    await page.locator(`tr[data-bucket='${name}']`).getByRole("link", { name }).click();
    await page.getByRole("link", { name: "Issue an access key for this bucket" }).click();
    await page.getByRole("heading", { name: "Access keys", level: 1 }).waitFor();
    await page.getByText("No access keys yet.").waitFor();
    // the bucket's page preselects it: only this bucket, read and write
    assert.ok(await page.getByLabel("Only the buckets chosen here").isChecked());
    assert.ok(await page.getByRole("checkbox", { name }).isChecked());
    await page.getByRole("checkbox", { name }).uncheck();
    await page.getByRole("button", { name: "Issue access key" }).click();
    await page.getByText("This field is required.").waitFor();
    await page.getByText("Choose at least one bucket.").waitFor();
    await page.getByLabel("Name", { exact: true }).fill("uploader");
    await page.getByRole("checkbox", { name }).check();
    assert.ok(await page.getByRole("radio", { name: /^Read and write/ }).isChecked());
    await page.getByRole("button", { name: "Issue access key" }).click();
    const issued = page.getByTestId("issued-key");
    await issued.getByText("Key uploader issued").waitFor();
    await issued.getByText(/shown only once/).waitFor();
    const accessKeyId = (await issued.locator("[data-secret='Access key id']").textContent())!;
    const secretAccessKey = (await issued.locator("[data-secret='Secret access key']").textContent())!;
    assert.match(accessKeyId, /^PK[A-Z2-7]{18}$/);
    assert.equal(secretAccessKey.length, 40);
    await issued.getByRole("button", { name: "Copy Secret access key" }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secretAccessKey);
    const row = page.locator(`tr[data-key='${accessKeyId}']`);
    await row.getByText("Read and write").waitFor();
    await row.getByRole("link", { name }).waitFor();
    await shot(page, "93-bucket-key-issued");

    // the page never shows the secret again
    await page.reload();
    await row.waitFor();
    assert.ok(!(await page.content()).includes(secretAccessKey), "the secret is gone after a reload");

    await row.getByRole("link", { name }).click();
    const endpoint = (await page.getByTestId("endpoint").textContent())!;
    s3 = new S3Client({
      endpoint,
      region: (await page.getByText("us-east-1").first().textContent())!,
      forcePathStyle: true,
      credentials: { accessKeyId, secretAccessKey },
      maxAttempts: 1,
    });
    await s3.send(new PutObjectCommand({ Bucket: name, Key: "notes/hello.txt", Body: body }));
  });

  test("the bucket's page shows the size after a reload, the usage snippet with its endpoint", async () => {
    await page.reload();
    await page.getByTestId("bucket-objects").filter({ hasText: "1" }).waitFor();
    assert.equal(await page.getByTestId("bucket-size").textContent(), "1.2 KB");
    const endpoint = (await page.getByTestId("endpoint").textContent())!;
    const snippet = page.getByTestId("snippet");
    assert.match(
      (await snippet.textContent())!,
      new RegExp(`AWS_ENDPOINT_URL=${endpoint}\\n[^]*aws s3 cp .* s3://${name}/`),
    );
    await page.getByRole("button", { name: "JavaScript" }).click();
    assert.match((await snippet.textContent())!, /forcePathStyle: true/);
    await page.getByRole("button", { name: "Copy the example" }).click();
    assert.match(await page.evaluate(() => navigator.clipboard.readText()), new RegExp(`endpoint: "${endpoint}"`));
    await page.getByRole("button", { name: "AWS CLI" }).click();
    await shot(page, "94-bucket-detail");
  });

  test("deleting: the name typed, refused in words while it holds an object, then with its objects", async () => {
    const confirm = page.getByLabel(new RegExp(`Type ${name} to confirm`));
    await page.getByText(/The bucket holds 1 object \(1.2 KB\)/).waitFor();
    await confirm.fill(name.slice(0, -1));
    await page.getByRole("button", { name: "Delete bucket" }).click();
    await page.getByText("Type the name exactly as shown.").waitFor();
    await confirm.fill(name);
    await page.getByRole("button", { name: "Delete bucket" }).click();
    const refused = page.getByTestId("not-empty");
    await refused.getByText(/The bucket is not empty/).waitFor();
    await refused.getByText("bucket_not_empty").waitFor();
    await shot(page, "95-bucket-delete-refused");

    await page.getByLabel("Delete all objects too").check();
    await page.getByRole("button", { name: "Delete bucket" }).click();
    await page.waitForURL("**/buckets");
    await page.getByText("No buckets yet").waitFor();
    const left = await call(t.app, { url: "/v1/buckets", token });
    assert.deepEqual(left.json(), []);
  });

  test("revoking the key: confirmed, gone from the list, and the gateway refuses it", async () => {
    assert.equal(await s3Refusal(s3.send(new ListBucketsCommand({}))), null, "the key works before");
    await page.getByRole("link", { name: "Access keys" }).click();
    await page.getByRole("button", { name: "Revoke uploader" }).click();
    await page.getByText("Key uploader revoked.").waitFor();
    await page.getByText("No access keys yet.").waitFor();
    await shot(page, "96-bucket-key-revoked");
    assert.equal(await s3Refusal(s3.send(new ListBucketsCommand({}))), "InvalidAccessKeyId");
  });

  test("Korean at a phone's width, keyboard focus visible; no console errors", async () => {
    const created = await call(t.app, { method: "POST", url: "/v1/buckets", token, body: { name: `${name}-ko` } });
    assert.equal(created.statusCode, 201, created.body);
    const key = await call(t.app, {
      method: "POST",
      url: "/v1/buckets/keys",
      token,
      body: { name: "backup-job", permission: "read" },
    });
    assert.equal(key.statusCode, 201, key.body);
    assert.equal(
      (await call(t.app, { method: "PATCH", url: "/v1/me", token, body: { locale: "ko" } })).statusCode,
      200,
    );
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${t.baseUrl}/buckets`);
    await page.getByRole("heading", { name: "버킷", level: 1 }).waitFor();
    await page.getByText("오브젝트 0개").waitFor();
    await page.getByText(/영문 소문자, 숫자, 점, 하이픈으로/).waitFor();
    await shot(page, "97-buckets-ko-phone");
    await page.getByRole("link", { name: `${name}-ko` }).click();
    await page.getByRole("heading", { name: "사용 방법" }).waitFor();
    await shot(page, "98-bucket-ko-phone");
    await page.getByRole("link", { name: "액세스 키", exact: true }).click();
    await page.locator("tr", { hasText: "backup-job" }).getByText("읽기 전용").waitFor();
    await page.locator("tr", { hasText: "backup-job" }).getByText("모든 버킷").waitFor();
    await shot(page, "99-bucket-keys-ko-phone");
    await page.getByRole("button", { name: "메뉴" }).click();
    await page
      .getByRole("navigation", { name: "메뉴", exact: true })
      .getByRole("link", { name: "버킷", exact: true })
      .waitFor();
    await page.getByRole("button", { name: "메뉴" }).click();
    await page.keyboard.press("Tab");
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    assert.notEqual(outline, "none", "the focused element shows its focus");
    assert.deepEqual(errors, []);
  });
});
