/**
 * The `platform` CLI as a user runs it: a child process against a real server, its config in a
 * temporary directory. Login and profiles, a database created, connected to with psql and backed up,
 * the generic `api` command, --json parsed, exit codes, the error report that arrives on failure, and
 * the terminal output (table, colour, spinner) in a real pseudo-terminal under tmux.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { scopedKey, signup, type TestApp } from "../helpers/app.js";
import { listeningApp } from "./lib.js";

const CLI = path.resolve("packages/cli/bin/platform.js");
const PASSWORD = "correct horse battery";
// eslint-disable-next-line no-control-regex -- terminal output is checked for its colour codes
const ANSI = /\x1b\[[0-9;]*m/g;
const ESC = "\x1b";
const has = (bin: string) => spawnSync("sh", ["-c", `command -v ${bin}`]).status === 0;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  json: () => any;
}

describe("platform CLI against a real server", () => {
  let t: TestApp & { baseUrl: string };
  let home: string;
  let user: { token: string; email: string; id: string };
  let env: Record<string, string>;
  let slug: string;

  const run = (args: string[], opts: { env?: Record<string, string>; input?: string } = {}): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { ...env, ...opts.env },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("error", reject);
      child.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr, json: () => JSON.parse(stdout) }));
      child.stdin.end(opts.input ?? "");
    });
  const reports = async () =>
    (
      await t.db.query<{ report: any; token_id: string }>(
        "SELECT report, token_id FROM cli_error_reports WHERE account_id = $1 ORDER BY received_at",
        [user.id],
      )
    ).rows;

  before(async () => {
    t = await listeningApp({ startJobs: true });
    user = await signup(t.app);
    home = mkdtempSync(path.join(tmpdir(), "platform-cli-"));
    env = {
      PATH: process.env.PATH!,
      HOME: home,
      PLATFORM_CONFIG_DIR: path.join(home, "config"),
      PLATFORM_API_URL: t.baseUrl,
      TERM: "xterm-256color",
    };
    slug = `cli-${Date.now().toString(36)}`;
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  test("login with e-mail and password stores the token in a 0600 config file; whoami --json", async () => {
    const login = await run(["login", "--email", user.email, "--password-stdin"], { input: PASSWORD + "\n" });
    assert.equal(login.code, 0, login.stderr);
    const file = path.join(home, "config", "config.json");
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const saved = JSON.parse(readFileSync(file, "utf8"));
    assert.match(saved.profiles.default.token, /^op_u_/);
    const who = await run(["whoami", "--json"]);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.json().email, user.email);
    assert.equal(who.json().token_kind, "full");
  });

  test("--profile keeps several logins; PLATFORM_TOKEN overrides the profile", async () => {
    const key = await scopedKey(t.app, user.token, ["databases:read"]);
    assert.equal((await run(["login", "--profile", "ci", "--token", key])).code, 0);
    assert.deepEqual((await run(["whoami", "--profile", "ci", "--json"])).json().scopes, ["databases:read"]);
    assert.equal((await run(["whoami", "--json"])).json().token_kind, "full");
    assert.equal((await run(["whoami", "--json"], { env: { PLATFORM_TOKEN: key } })).json().token_kind, "scoped");
    const created = await run(["keys", "create", "agent", "--scope", "databases:read", "billing:read", "--json"]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.json().key, /^opk_/);
    const listed = await run(["keys", "list", "--json"]);
    assert.ok(listed.json().some((k: any) => k.name === "agent"));
  });

  test("db create waits until running; list, get and the generic api command parse as JSON", async () => {
    const created = await run(["db", "create", slug, "--size", "dev", "--json"]);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.json().state, "running");
    assert.ok(created.json().password, "the one-time password is shown");
    const list = await run(["db", "list", "--json"]);
    assert.deepEqual(
      list.json().map((d: any) => d.slug),
      [slug],
    );
    const got = await run(["api", "getDatabase", "--id", slug, "--profile", "default", "--json"]);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.json().slug, slug);
    const ops = await run(["api", "--list", "--json"]);
    assert.ok(ops.json().some((o: any) => o.operation === "createDatabase" && o.method === "POST"));
    const balance = await run(["billing", "balance", "--json"]);
    assert.equal(balance.code, 0, balance.stderr);
    assert.equal(typeof balance.json().balance, "number");
  });

  test(
    "db connect runs psql with the stored credentials",
    { skip: has("psql") ? false : "psql is not installed (apt-get install postgresql-client)" },
    async () => {
      const res = await run(["db", "connect", slug, "--", "-tAc", "select 40 + 2"], { env: { PGSSLMODE: "require" } });
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout.trim(), "42");
      // a new password is stored too, and the old one stops working
      assert.equal((await run(["db", "rotate-password", slug, "--json"])).code, 0);
      const again = await run(["db", "connect", slug, "--", "-tAc", "select current_user"]);
      assert.equal(again.code, 0, again.stderr);
    },
  );

  test("db backup waits for its command and reports it succeeded", async () => {
    const res = await run(["db", "backup", slug, "--label", "cli", "--json"]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.json().status, "succeeded");
  });

  test("exit codes: 2 usage, 1 API error, 3 network; --json errors on stderr", async () => {
    assert.equal((await run(["db", "create"])).code, 2, "missing argument");
    assert.equal((await run(["api", "createDatabase", "--nosuch", "x"])).code, 2, "unknown field");
    assert.equal(
      (await run(["whoami"], { env: { PLATFORM_TOKEN: "", PLATFORM_CONFIG_DIR: path.join(home, "empty") } })).code,
      2,
      "not logged in",
    );
    const api = await run(["db", "get", "no-such-db", "--json"], { env: { PLATFORM_NO_ERROR_REPORTS: "1" } });
    assert.equal(api.code, 1);
    assert.equal(JSON.parse(api.stderr).error.code, "not_found");
    const net = await run(["db", "list", "--api-url", "http://127.0.0.1:9", "--json"]);
    assert.equal(net.code, 3, net.stderr);
    assert.equal(JSON.parse(net.stderr).error.code, "network_error");
  });

  test("a failure sends an error report with the spec's fields and without the token; PLATFORM_NO_ERROR_REPORTS=1 sends none", async () => {
    const before = (await reports()).length;
    const res = await run(["db", "get", "no-such-db", "--json"]);
    assert.equal(res.code, 1);
    const rows = await reports();
    assert.equal(rows.length, before + 1, "one report");
    const r = rows.at(-1)!.report;
    assert.equal(r.kind, "api_error");
    assert.equal(r.command, "db get");
    assert.equal(r.status, 404);
    assert.equal(r.code, "not_found");
    assert.deepEqual(r.flags, ["--json"]);
    assert.equal(r.api_host, new URL(t.baseUrl).host);
    assert.equal(r.retries, 0);
    for (const field of ["occurred_at", "cli_version", "os", "message"]) assert.ok(r[field], field);
    const token = JSON.parse(readFileSync(path.join(home, "config", "config.json"), "utf8")).profiles.default.token;
    assert.ok(
      !JSON.stringify(r).includes(token) && !JSON.stringify(r).includes(token.slice(5)),
      "no token in the report",
    );

    // a token given on the command line is not sent either: flags go by name only
    await run(["login", "--profile", "broken", "--token", token, "--api-url", "http://127.0.0.1:9"]);
    assert.equal((await run(["db", "get", "no-such-db"], { env: { PLATFORM_NO_ERROR_REPORTS: "1" } })).code, 1);
    assert.equal((await reports()).length, before + 1, "PLATFORM_NO_ERROR_REPORTS=1 sends nothing");
  });

  describe(
    "in a terminal (tmux)",
    { skip: has("tmux") ? false : "tmux is not installed (apt-get install tmux)" },
    () => {
      const session = `platform-cli-${process.pid}`;
      const tmux = (...args: string[]) => spawnSync("tmux", ["-L", session, ...args], { encoding: "utf8" });
      const screen = () => tmux("capture-pane", "-p", "-e", "-t", session).stdout;

      before(() => {
        const exports = Object.entries(env)
          .map(([k, v]) => `${k}='${v}'`)
          .join(" ");
        const r = tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "40", `env -i ${exports} sh`);
        assert.equal(r.status, 0, r.stderr);
      });
      after(() => {
        tmux("kill-server");
      });

      async function typeAndWait(command: string, done: RegExp, onScreen?: (s: string) => void): Promise<string> {
        tmux("send-keys", "-t", session, "clear", "Enter");
        await new Promise((r) => setTimeout(r, 200));
        tmux("send-keys", "-t", session, `node ${CLI} ${command}; echo "exit=$?"`, "Enter");
        const deadline = Date.now() + 60_000;
        for (;;) {
          const s = screen();
          onScreen?.(s);
          if (done.test(s)) return s;
          if (Date.now() > deadline) throw new Error(`no ${done} on screen:\n${s}`);
          await new Promise((r) => setTimeout(r, 25));
        }
      }

      test("db list is an aligned table with a bold header and a coloured state", async () => {
        const s = await typeAndWait("db list", /exit=\d+/);
        assert.match(s, /exit=0/);
        const plain = s.replace(ANSI, "");
        const lines = plain.split("\n");
        const header = lines.find((l) => l.includes("SLUG"))!;
        const row = lines.find((l) => l.includes(slug))!;
        assert.ok(header && row, plain);
        assert.equal(row.indexOf(slug), header.indexOf("SLUG"), "columns aligned");
        assert.equal(row.indexOf("running"), header.indexOf("STATE"), "columns aligned");
        assert.ok(s.includes(`${ESC}[1mID`), "bold header on a terminal");
        assert.ok(s.includes(`${ESC}[32mrunning`), "green state on a terminal");
      });

      test("a spinner turns while waiting for an asynchronous operation, then the outcome", async () => {
        const frames = new Set<string>();
        const s = await typeAndWait(`db backup ${slug}`, /exit=\d+/, (screen) => {
          const m = screen.replace(ANSI, "").match(/([⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]) Backing up/);
          if (m) frames.add(m[1]);
        });
        assert.match(s, /exit=0/);
        assert.ok(frames.size >= 2, `the spinner turned (frames seen: ${[...frames].join("")})`);
        assert.match(s, /Backup done/);
      });

      test("the same command piped has no colour and no spinner", async () => {
        const s = await typeAndWait(`db list | cat`, /exit=\d+/);
        assert.ok(
          !s
            .split("\n")
            .filter((l) => l.includes(slug))
            .join("")
            .includes(`${ESC}[3`),
          "no colour when piped",
        );
      });
    },
  );
});
