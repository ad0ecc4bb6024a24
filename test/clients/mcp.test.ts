import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { scopedKey, signup, type TestApp } from "../helpers/app.js";
import { listeningApp } from "./lib.js";

const CLI = path.resolve("packages/cli/bin/platform.js");
type ToolText = { content: { type: string; text: string }[]; isError?: boolean };
const textOf = (r: unknown) => (r as ToolText).content.map((c) => c.text).join("\n");

async function exercise(client: Client) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const must of ["list_databases", "get_database", "whoami", "call_operation"])
    assert.ok(names.includes(must), `${must} in ${names.join(",")}`);
  assert.ok(!names.includes("operator"), "operator endpoints are not offered to agents");
  // the key holds only databases:read, so the session is read-only: no write tool is listed
  assert.ok(!names.includes("create_database"), "a key without write scopes gets no write tools");
  const generic = tools.find((t) => t.name === "call_operation")!;
  assert.ok(((generic.inputSchema.properties as any).operation.enum as string[]).includes("listDatabases"));

  // allowed by the key's scope: an empty list
  const list = await client.callTool({ name: "list_databases", arguments: {} });
  assert.ok(!list.isError, textOf(list));
  assert.deepEqual(JSON.parse(textOf(list)), []);
  // refused by the key's scope exactly as REST refuses it: a tool error carrying the API's code
  const refused = await client.callTool({ name: "call_operation", arguments: { operation: "getBillingBalance" } });
  assert.equal(refused.isError, true, "billing is outside the key's scopes");
  assert.match(textOf(refused), /scope_insufficient/);
  assert.match(textOf(refused), /Next step:/);
  const bad = await client.callTool({ name: "get_database", arguments: {} });
  assert.equal(bad.isError, true);
  assert.match(textOf(bad), /needs the field "id"/);

  const { resources } = await client.listResources();
  assert.equal(resources[0].uri, "platform://manual");
  const manual = await client.readResource({ uri: "platform://manual" });
  assert.match(String((manual.contents[0] as { text: string }).text), /\/v1\/databases/);
}

describe("MCP server", () => {
  let t: TestApp & { baseUrl: string };
  let key: string;
  before(async () => {
    t = await listeningApp();
    const user = await signup(t.app);
    key = await scopedKey(t.app, user.token, ["databases:read"]);
  });
  after(async () => {
    await t.close();
  });

  test("over Streamable HTTP at /v1/mcp with the caller's bearer: task tools, a call, a scope refusal as a tool error", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    });
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(transport);
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
  });

  test("/v1/mcp without a token is 401 auth_required in the platform's error body", async () => {
    const res = await fetch(`${t.baseUrl}/v1/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as any).error.code, "auth_required");
  });

  test("over stdio (platform mcp) with an opk_ key from the environment", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp"],
      env: {
        PATH: process.env.PATH!,
        HOME: "/nonexistent",
        PLATFORM_API_URL: t.baseUrl,
        PLATFORM_TOKEN: key,
        PLATFORM_NO_ERROR_REPORTS: "1",
      },
      stderr: "pipe",
    });
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(transport);
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
  });
});
