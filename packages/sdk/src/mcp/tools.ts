/**
 * MCP tools made from the API's OpenAPI operations, grouped so an agent sees a manageable set: one tool
 * per area (OpenAPI tag) whose `operation` argument picks the endpoint, plus `call_operation`, the
 * generic call by operationId. Descriptions and input schemas come from the operations themselves, so a
 * new route appears as soon as the server documents it.
 */
import {
  buildRequest,
  type JsonSchema,
  type Operation,
  type OperationIndex,
  type OperationRequest,
} from "../operations.js";

/** How a tool call reaches the API: over HTTP with the agent's key, or into the server itself. */
export type Execute = (request: OperationRequest) => Promise<{ status: number; body: unknown }>;

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: "object" };
}

export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  isError?: boolean;
}

/** Not for agents: other credentials than a user's bearer (operator, payment webhooks, fleet), sign-in, and what is a resource already. */
const EXCLUDED_TAGS = new Set(["operator", "mcp"]);
const EXCLUDED_OPERATIONS = new Set([
  "stripeWebhook",
  "tossWebhook",
  "reportFleetPatch",
  "signup",
  "login",
  "getManual",
  "getOpenApi",
  "reportCliErrors",
]);

export const GENERIC_TOOL = "call_operation";

export function agentOperations(index: OperationIndex): Operation[] {
  return index.operations.filter((op) => !EXCLUDED_TAGS.has(op.tag) && !EXCLUDED_OPERATIONS.has(op.id));
}

const toolName = (tag: string) => tag.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);

function line(op: Operation): string {
  const fields = Object.keys(op.inputSchema.properties).map((f) => (op.inputSchema.required.includes(f) ? `${f}*` : f));
  return `- ${op.id} (${op.method} ${op.path}): ${op.summary || op.description}${fields.length ? ` Arguments: ${fields.join(", ")}.` : ""}`;
}

export function buildTools(index: OperationIndex): ToolDefinition[] {
  const ops = agentOperations(index);
  const tools: ToolDefinition[] = [];
  for (const tag of index.tags) {
    const mine = ops.filter((o) => o.tag === tag.name);
    if (!mine.length) continue;
    tools.push({
      name: toolName(tag.name),
      description: `${tag.description || `The ${tag.name} endpoints.`} Pick one operation and pass its arguments (* = required):\n${mine.map(line).join("\n")}`,
      inputSchema: {
        type: "object",
        properties: {
          operation: { type: "string", enum: mine.map((o) => o.id), description: "the operation to call" },
          arguments: {
            type: "object",
            description: "the operation's path, query and body fields, side by side",
            anyOf: mine.map((o) => ({ title: o.id, ...o.inputSchema })),
          },
        },
        required: ["operation"],
        additionalProperties: false,
      },
    });
  }
  tools.push({
    name: GENERIC_TOOL,
    description:
      "Call any API operation by its operationId (see the OpenAPI document or the manual resource), with its path, query and body fields in arguments.",
    inputSchema: {
      type: "object",
      properties: {
        operation: { type: "string", enum: ops.map((o) => o.id), description: "operationId" },
        arguments: { type: "object", description: "the operation's path, query and body fields, side by side" },
      },
      required: ["operation"],
      additionalProperties: false,
    },
  });
  return tools;
}

const text = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value, null, 2));
const failure = (message: string): ToolResult => ({ content: [{ type: "text", text: message }], isError: true });

/**
 * Runs one tool call. The API decides everything (auth, scopes, validation): its error answer, e.g.
 * 403 scope_insufficient, comes back as a tool error with the API's code and message.
 */
export async function callTool(
  index: OperationIndex,
  execute: Execute,
  name: string,
  args: Record<string, unknown> | undefined,
): Promise<ToolResult> {
  const allowed = agentOperations(index);
  const operationId = args?.operation;
  if (typeof operationId !== "string")
    return failure(`${name} needs "operation": one of the operationIds in its description.`);
  const op = allowed.find((o) => o.id === operationId && (name === GENERIC_TOOL || toolName(o.tag) === name));
  if (!op) return failure(`${name} has no operation "${operationId}".`);
  const input = args?.arguments ?? {};
  if (typeof input !== "object" || input === null || Array.isArray(input))
    return failure(`"arguments" must be an object.`);
  let request: OperationRequest;
  try {
    request = buildRequest(op, input as Record<string, unknown>);
  } catch (err) {
    return failure((err as Error).message);
  }
  const { status, body } = await execute(request);
  if (status >= 400) return failure(`HTTP ${status}: ${text(body)}`);
  return {
    content: [
      { type: "text", text: body === null || body === undefined || body === "" ? `HTTP ${status}` : text(body) },
    ],
  };
}
