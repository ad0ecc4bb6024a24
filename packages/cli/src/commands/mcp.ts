import type { Command } from "commander";
import type { OpenApiDocument } from "@hosting-platform/sdk";
import { PlatformApiError } from "@hosting-platform/sdk";
import { contextOf, VERSION } from "../context.js";

export function mcpCommand(program: Command): void {
  program
    .command("mcp")
    .description(
      "Serve the platform to an AI agent as an MCP server over stdio (auth: PLATFORM_TOKEN, an opk_ key, or the profile's token)",
    )
    .option("--read-only", "offer only tools that change nothing (write tools are neither listed nor callable)")
    .action(async (opts: { readOnly?: boolean }, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const client = ctx.authed();
      // loaded here only: the MCP SDK is large and no other command needs it
      const [{ createPlatformMcpServer }, { StdioServerTransport }] = await Promise.all([
        import("@hosting-platform/sdk/mcp"),
        import("@modelcontextprotocol/sdk/server/stdio.js"),
      ]);
      const document = (await client.request("GET", "/v1/openapi.json")) as OpenApiDocument;
      // a key without any write scope is read-only whatever the flag says (as on /v1/mcp)
      const token = (await client.request("GET", "/v1/token")) as { kind: string; scopes: string[] };
      const writeless = token.kind === "scoped" && token.scopes.every((sc) => sc.endsWith(":read"));
      const server = createPlatformMcpServer({
        document,
        version: VERSION,
        readOnly: opts.readOnly === true || writeless,
        execute: async (req) => {
          try {
            return {
              status: 200,
              body: await client.request(req.method, req.path, { query: req.query, body: req.body }),
            };
          } catch (err) {
            if (err instanceof PlatformApiError)
              return { status: err.status, body: { error: { code: err.code, message: err.message } } };
            throw err;
          }
        },
      });
      const transport = new StdioServerTransport();
      await server.connect(transport);
      // serves until the agent closes stdin
      await new Promise<void>((resolve) => {
        transport.onclose = () => resolve();
        process.stdin.on("end", () => resolve());
      });
    });
}
