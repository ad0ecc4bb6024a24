/**
 * `platform login --suite`: the CLI's one-shot loopback server gets the browser back from the suite sign-in (driven
 * here by an HTTP client with a cookie jar through the real OpenID Connect provider), exchanges the one-time code
 * and stores the token like a password login; a held sign-in comes back as the notice in words, exit 1.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { call } from "../helpers/app.js";
import { follow, person, signedIn, suiteApp, type SuiteTestApp } from "./sign-in-lib.js";

const CLI = path.resolve("packages/cli/bin/platform.js");

describe("platform login --suite", () => {
  let s: SuiteTestApp;
  let home: string;
  before(async () => {
    s = await suiteApp();
    home = mkdtempSync(path.join(tmpdir(), "platform-suite-cli-"));
  });
  after(async () => {
    await s?.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** Runs the login; when it prints the address, the "browser" signs in as `sub` and follows every redirect. */
  const login = (sub: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, "login", "--suite", "--no-browser"], {
        env: {
          PATH: process.env.PATH!,
          HOME: home,
          PLATFORM_CONFIG_DIR: path.join(home, "config"),
          PLATFORM_API_URL: s.baseUrl,
          PLATFORM_NO_ERROR_REPORTS: "1",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      let browsed = false;
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => {
        stderr += d;
        const start = /(http:\/\/\S+\/v1\/auth\/suite\/start\S+)/.exec(stderr)?.[1];
        if (start && !browsed) {
          browsed = true;
          void (async () => {
            const callback = await follow(s, sub, start);
            const back = await fetch(callback, { redirect: "manual" });
            const loopback = back.headers.get("location")!;
            assert.match(loopback, /^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
            await (await fetch(loopback)).text();
          })().catch(reject);
        }
      });
      child.on("error", reject);
      child.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });

  test("the CLI signs in through the browser and stores the token; a held sign-in is told in words", async () => {
    const admin = person(s, { enterprise_admin: true });
    const owner = await signedIn(s, admin.sub); // links the company; setup pending
    const staff = person(s);
    const held = await login(staff.sub);
    assert.equal(held.code, 1, held.stderr);
    assert.match(held.stderr, /setup is not finished yet/);

    const ok = await login(admin.sub);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /--org/);
    const config = JSON.parse(readFileSync(path.join(home, "config", "config.json"), "utf8"));
    const token = config.profiles.default.token as string;
    assert.match(token, /^op_u_/);
    assert.equal(config.profiles.default.email, admin.email);
    const me = await call(s.app, { url: "/v1/me", token });
    assert.equal(me.json().id, owner.account.id);
  });
});
