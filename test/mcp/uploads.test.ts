/**
 * The tools that take a folder inline: deploy_site_files (a static site created, two deployments, rollback_site)
 * and start_build_from_files (the archive uploaded through the build's upload_url and the build queued).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { call, signup, type TestApp } from "../helpers/app.js";
import { listeningApp } from "../clients/lib.js";

type ToolText = { content: { type: string; text: string }[]; isError?: boolean };

describe("MCP tools with inline files", () => {
  let t: TestApp & { baseUrl: string };
  let user: { token: string };
  let agent: Client;
  const json = async (name: string, args: Record<string, unknown>) => {
    const r = (await agent.callTool({ name, arguments: args })) as ToolText;
    const text = r.content.map((c) => c.text).join("\n");
    assert.ok(!r.isError, `${name}: ${text}`);
    return JSON.parse(text);
  };
  before(async () => {
    t = await listeningApp({ env: { APPS_DOMAIN: "apps.mcp.test" } });
    user = await signup(t.app);
    agent = new Client({ name: "uploads", version: "1.0.0" });
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/v1/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${user.token}` } },
      }),
    );
  });
  after(async () => {
    await agent.close();
    await t.close();
  });

  test("a site from files: created, deployed twice, rolled back to the first", async () => {
    const first = await json("deploy_site_files", {
      slug: "agent-site",
      files: { "index.html": "<h1>v1</h1>", "img/dot.gif": "base64:R0lGODlhAQABAAAAACw=" },
    });
    assert.equal(first.file_count, 2);
    const second = await json("deploy_site_files", { slug: "agent-site", files: { "index.html": "<h1>v2</h1>" } });
    const site = (await call(t.app, { url: "/v1/static/agent-site", token: user.token })).json();
    assert.equal(site.live_deployment_id, second.id);
    await json("rollback_site", { slug: "agent-site", deployment_id: first.id });
    const back = (await call(t.app, { url: "/v1/static/agent-site", token: user.token })).json();
    assert.equal(back.live_deployment_id, first.id);
  });

  test("a build from files: the archive uploaded and the build queued", async () => {
    const started = await json("start_build_from_files", {
      files: { Dockerfile: "FROM scratch\nCOPY hello.txt /\n", "hello.txt": "hello\n" },
    });
    const build = (await call(t.app, { url: `/v1/builds/${started.id}`, token: user.token })).json();
    assert.ok(build.source_bytes > 0, JSON.stringify(build));
    assert.ok(build.uploaded_at);
  });
});
