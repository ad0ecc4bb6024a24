import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { indexOperations, type OpenApiDocument } from "../operations.js";
import { buildTools, callTool, type Execute } from "./tools.js";

export const MANUAL_URI = "platform://manual";

export interface PlatformMcpOptions {
  /** the API's OpenAPI document (GET /v1/openapi.json) */
  document: OpenApiDocument;
  execute: Execute;
  version?: string;
}

/**
 * The platform as an MCP server: the tools of tools.ts and the manual (GET /v1/manual) as a resource.
 * Built on the SDK's low-level Server because the tools' input schemas are JSON schemas taken from
 * the OpenAPI document at run time, not zod schemas known when this is compiled.
 */
export function createPlatformMcpServer(opts: PlatformMcpOptions): Server {
  const index = indexOperations(opts.document);
  const tools = buildTools(index);
  const server = new Server(
    { name: "hosting-platform", version: opts.version ?? "1.0.0" },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: `Tools call the hosting platform's REST API with your key; each area's tool takes {operation, arguments}. Read ${MANUAL_URI} first.`,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req) =>
    callTool(index, opts.execute, req.params.name, req.params.arguments),
  );
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [
      {
        uri: MANUAL_URI,
        name: "manual",
        description: "The platform's plain-text manual for AI agents",
        mimeType: "text/plain",
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    if (req.params.uri !== MANUAL_URI) throw new Error(`no resource ${req.params.uri}`);
    const { status, body } = await opts.execute({ method: "GET", path: "/v1/manual", query: {}, body: undefined });
    if (status >= 400) throw new Error(`the manual could not be read: HTTP ${status}`);
    return { contents: [{ uri: MANUAL_URI, mimeType: "text/plain", text: String(body) }] };
  });
  return server;
}
