/**
 * The company context through the clients: the SDK's `owner: "org"` option and the CLI's `--org` flag send
 * X-Owner: org, so what they create is a company asset and what they list is the organization's.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import path from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createPlatformClient } from "@hosting-platform/sdk";
import { call, type TestApp } from "../helpers/app.js";
import { listeningApp } from "../clients/lib.js";
import { makeOrg, ORG, type TestOrg } from "./lib.js";

const CLI = path.resolve("packages/cli/bin/platform.js");
let t: TestApp & { baseUrl: string };
let org: TestOrg;
let home: string;

before(async () => {
  t = await listeningApp({ env: { APPS_DOMAIN: "apps.orgclients.test" } });
  org = await makeOrg(t, { admins: 0, members: 1 });
  home = mkdtempSync(path.join(tmpdir(), "platform-cli-org-"));
});
after(async () => {
  await t?.close();
  rmSync(home, { recursive: true, force: true });
});

const companySites = async () =>
  (await call(t.app, { url: "/v1/static", token: org.owner.token, headers: ORG }))
    .json()
    .map((s: { name: string }) => s.name);

test("SDK: owner 'org' creates and lists company assets; the default stays personal", async () => {
  const member = org.members[0];
  const company = createPlatformClient({ baseUrl: t.baseUrl, token: member.token, owner: "org" });
  await company.request("POST", "/v1/static", { body: { name: "sdk-company" } });
  const personal = createPlatformClient({ baseUrl: t.baseUrl, token: member.token });
  await personal.request("POST", "/v1/static", { body: { name: "sdk-personal" } });
  assert.deepEqual(await companySites(), ["sdk-company"]);
  const mine = (await personal.request("GET", "/v1/static")) as { name: string }[];
  assert.deepEqual(
    mine.map((s) => s.name),
    ["sdk-personal"],
  );
});

test("CLI: --org acts for the organization", async () => {
  const env = {
    PATH: process.env.PATH!,
    HOME: home,
    PLATFORM_CONFIG_DIR: path.join(home, "config"),
    PLATFORM_API_URL: t.baseUrl,
    PLATFORM_TOKEN: org.members[0].token,
  };
  // asynchronous: the server answering the CLI runs in this process
  const run = (args: string[]) => promisify(execFile)(process.execPath, [CLI, ...args], { env, encoding: "utf8" });
  await run(["--org", "api", "createStaticSite", "--name", "cli-company", "--json"]);
  const listed = await run(["api", "listStaticSites", "--org", "--json"]);
  assert.ok(JSON.parse(listed.stdout).some((s: { name: string }) => s.name === "cli-company"));
  const personal = await run(["api", "listStaticSites", "--json"]);
  assert.ok(!JSON.parse(personal.stdout).some((s: { name: string }) => s.name === "cli-company"));
});
