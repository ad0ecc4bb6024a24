/**
 * The MCP tools: task tools (tasks.ts, task-specs-*.ts) for what agents do most, plus `call_operation`, the generic
 * call by operationId, for everything else. The earlier one-tool-per-OpenAPI-tag tools are gone: their
 * `{operation, arguments}` schemas were as large as the API and no annotation could describe a tool that both
 * reads and deletes; the task tools replace them and `call_operation` still reaches every operation.
 * Every call runs as the caller through `execute` (the API decides auth, scopes, validation and audit).
 */
import { buildRequest, type Operation, type OperationIndex, type OperationRequest } from "../operations.js";
import { PlatformCallError, toolError, untrusted, type Confirmations, type ToolResult } from "./guard.js";
import { appTasks } from "./task-specs-apps.js";
import { dataTasks } from "./task-specs-data.js";
import {
  CONFIRM_FIELD,
  deriveAnnotations,
  HIDDEN_OPERATIONS,
  methodOf,
  resolveInput,
  type Billable,
  type Group,
  type TaskContext,
  type TaskSpec,
  type ToolAnnotations,
} from "./tasks.js";

export type { ToolResult } from "./guard.js";

/** How a tool call reaches the API: over HTTP with the agent's key, or into the server itself. */
export type Execute = (request: OperationRequest) => Promise<{ status: number; body: unknown }>;

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  annotations: ToolAnnotations;
}

export const TASK_TOOLS: TaskSpec[] = [...dataTasks, ...appTasks];
export const GENERIC_TOOL = "call_operation";

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
  // an endless Server-Sent Events stream is no tool answer: agents page GET /v1/events (listEvents) instead
  "streamEvents",
]);

export function agentOperations(index: OperationIndex): Operation[] {
  return index.operations.filter((op) => !EXCLUDED_TAGS.has(op.tag) && !EXCLUDED_OPERATIONS.has(op.id));
}

export interface ToolMode {
  /** only tools that change nothing are listed and callable */
  readOnly?: boolean;
}

/** The operations a tool may call in this mode (the read-only variant's, in read-only mode). */
export function callsOf(spec: TaskSpec, mode: ToolMode): string[] {
  return mode.readOnly && spec.readOnlyVariant ? spec.readOnlyVariant.calls : spec.calls;
}

function taskDefinition(index: OperationIndex, spec: TaskSpec, mode: ToolMode): ToolDefinition | null {
  const variant = mode.readOnly ? spec.readOnlyVariant : undefined;
  const calls = callsOf(spec, mode);
  const annotations = deriveAnnotations(
    calls.map((c) => methodOf(index, c)),
    { destructive: variant ? false : spec.destructive, openWorld: spec.openWorld },
  );
  if (mode.readOnly && !annotations.readOnlyHint) return null;
  return {
    name: spec.name,
    description: `[${spec.group}] ${variant?.description ?? spec.description}`,
    inputSchema: resolveInput(index, spec, variant?.drop),
    annotations,
  };
}

export function buildTools(index: OperationIndex, mode: ToolMode = {}): ToolDefinition[] {
  const tools = TASK_TOOLS.map((spec) => taskDefinition(index, spec, mode)).filter((t): t is ToolDefinition => !!t);
  const ops = agentOperations(index).filter((o) => !mode.readOnly || o.method === "GET");
  tools.push({
    name: GENERIC_TOOL,
    description: mode.readOnly
      ? "Call any read operation (GET) by its operationId, with its path and query fields in arguments. Use the task tools first."
      : "Call any API operation by its operationId (docs_search or the manual resource name them), with its path, query and body fields in arguments. Use the task tools first.",
    inputSchema: {
      type: "object",
      properties: {
        operation: { type: "string", enum: ops.map((o) => o.id), description: "operationId" },
        arguments: { type: "object", description: "the operation's path, query and body fields, side by side" },
        ...(mode.readOnly ? {} : { confirm: CONFIRM_FIELD }),
      },
      required: ["operation"],
      additionalProperties: false,
    },
    // any operation: it may change or delete anything the key may
    annotations: mode.readOnly
      ? { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
      : { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  });
  return tools;
}

/** Tools by group, for the report and the README. */
export function toolGroups(index: OperationIndex, mode: ToolMode = {}): Record<Group | "generic", string[]> {
  const out = {} as Record<Group | "generic", string[]>;
  for (const t of buildTools(index, mode)) {
    const group = TASK_TOOLS.find((s) => s.name === t.name)?.group ?? "generic";
    (out[group] ??= []).push(t.name);
  }
  return out;
}

export interface CallDeps extends ToolMode {
  execute: Execute;
  confirmations: Confirmations;
}

const text = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value, null, 2));
const ok = (value: unknown): ToolResult => ({
  content: [{ type: "text", text: value === undefined || value === null || value === "" ? "done" : text(value) }],
});

function requestOf(index: OperationIndex, operationId: string, input: Record<string, unknown>): OperationRequest {
  const op = index.byId.get(operationId);
  if (op) return buildRequest(op, input);
  const hidden = HIDDEN_OPERATIONS[operationId];
  if (!hidden) throw new Error(`unknown operation ${operationId}`);
  let path = hidden.path;
  const rest: Record<string, unknown> = { ...input };
  for (const p of hidden.pathParams) {
    path = path.replace(`{${p}}`, encodeURIComponent(String(rest[p] ?? "")));
    delete rest[p];
  }
  return hidden.method === "GET"
    ? { method: "GET", path, query: rest as OperationRequest["query"], body: undefined }
    : { method: hidden.method, path, query: {}, body: rest };
}

function errorOf(status: number, body: unknown): PlatformCallError {
  const e = (body as { error?: { code?: string; message?: string } } | null)?.error;
  return new PlatformCallError(status, e?.code ?? `http_${status}`, e?.message ?? `HTTP ${status}: ${text(body)}`);
}

function contextOf(index: OperationIndex, deps: CallDeps, allowed: string[]): TaskContext {
  return {
    readOnly: !!deps.readOnly,
    untrusted,
    async call(operationId, input = {}) {
      if (!allowed.includes(operationId)) throw new Error(`the tool does not declare ${operationId}`);
      const { status, body } = await deps.execute(requestOf(index, operationId, input));
      if (status >= 400) throw errorOf(status, body);
      return body;
    },
    async upload(operationId, input, archive) {
      if (!allowed.includes(operationId)) throw new Error(`the tool does not declare ${operationId}`);
      // the document names a raw body as the field "body" (static files) or not at all (a build's upload_url)
      const named = index.byId.get(operationId)?.hasBody ? { ...input, body: "" } : input;
      const request = { ...requestOf(index, operationId, named), body: archive };
      const { status, body } = await deps.execute({ ...request, contentType: "application/gzip" });
      if (status >= 400) throw errorOf(status, body);
      return body;
    },
  };
}

const won = (n: number) => `${Math.round(n).toLocaleString("en-US")} KRW`;

/** The price of what a call would bill, the caller's balance, and a token to confirm with; null when it is free. */
async function quote(
  index: OperationIndex,
  deps: CallDeps,
  billable: Billable,
): Promise<{ free: boolean; lines: string[] }> {
  const ctx = contextOf(index, deps, ["mcpPrices", "getBillingBalance"]);
  const catalog = await ctx.call("mcpPrices");
  const price = catalog.resources?.[billable.kind]?.sizes?.[billable.size];
  if (!price) return { free: false, lines: [`No catalog price for ${billable.kind} size ${billable.size}.`] };
  const storagePerGbMonth = (price.storage_microkrw_per_gb_hour * 730) / 1_000_000;
  const gb = billable.storageGb;
  const perHour = price.krw_per_hour + (gb ? (price.storage_microkrw_per_gb_hour * gb) / 1_000_000 : 0);
  if (perHour === 0 && storagePerGbMonth === 0) return { free: true, lines: [] };
  const lines = [
    `Price of ${billable.kind} size ${billable.size}: ${won(perHour)} per hour, about ${won(perHour * 730)} per month (730 hours)` +
      (gb
        ? ` including ${gb} GB of storage.`
        : storagePerGbMonth
          ? `, plus storage at ${won(storagePerGbMonth)} per GB-month.`
          : "."),
  ];
  try {
    const b = await ctx.call("getBillingBalance");
    lines.push(
      `Current balance: ${won(b.balance)}; burn rate now ${won(b.burn_rate_krw_per_hour ?? 0)} per hour` +
        (b.hours_left != null ? ` (about ${Math.floor(b.hours_left)} hours left).` : "."),
    );
  } catch (err) {
    lines.push(`The balance could not be read with this key (${(err as Error).message}).`);
  }
  return { free: false, lines };
}

/**
 * Runs one tool call. The API decides everything about permission: its error answer, e.g. 403
 * scope_insufficient, comes back as a tool error with the API's code, message and a next step.
 */
export async function callTool(
  index: OperationIndex,
  deps: CallDeps,
  name: string,
  args: Record<string, unknown> | undefined,
): Promise<ToolResult> {
  const input = (args ?? {}) as Record<string, any>;
  try {
    if (name === GENERIC_TOOL) return await callGeneric(index, deps, input);
    const spec = TASK_TOOLS.find((s) => s.name === name);
    if (!spec) return toolError("not_found", `There is no tool ${name}; list the tools again.`, 404);
    const definition = taskDefinition(index, spec, deps);
    if (!definition)
      return toolError("read_only_mode", `${name} changes things and this MCP session is read-only.`, 403);
    const known = Object.keys(definition.inputSchema.properties as object);
    const unknown = Object.keys(input).filter((k) => !known.includes(k));
    if (unknown.length)
      return toolError(
        "validation_failed",
        `${name} takes no field ${unknown.join(", ")}; it takes ${known.join(", ")}.`,
      );
    for (const r of (definition.inputSchema.required as string[] | undefined) ?? [])
      if (input[r] === undefined) return toolError("validation_failed", `${name} needs the field "${r}".`);
    const { confirm, ...rest } = input;

    const reasons: string[] = [];
    const billable = spec.billable?.(rest) ?? null;
    if (billable) {
      const q = await quote(index, deps, billable);
      if (!q.free) reasons.push(...q.lines);
    }
    const why = deps.readOnly ? null : (spec.confirmation?.(rest) ?? null);
    if (why) reasons.push(why);
    if (reasons.length && !deps.confirmations.verify(name, rest, confirm)) {
      const token = deps.confirmations.issue(name, rest);
      return ok(
        [
          "CONFIRMATION NEEDED: nothing was done yet.",
          ...reasons,
          `Tell the person, and once they agree call ${name} again with the same arguments plus confirm: "${token}" (valid 10 minutes, for these exact arguments only).`,
        ].join("\n"),
      );
    }
    return ok(await spec.run(contextOf(index, deps, callsOf(spec, deps)), rest));
  } catch (err) {
    if (err instanceof PlatformCallError) return toolError(err.code, err.message, err.status);
    return toolError("invalid_request", (err as Error).message);
  }
}

async function callGeneric(index: OperationIndex, deps: CallDeps, args: Record<string, unknown>): Promise<ToolResult> {
  const operationId = args.operation;
  if (typeof operationId !== "string")
    return toolError("validation_failed", `${GENERIC_TOOL} needs "operation": an operationId.`);
  const op = agentOperations(index).find((o) => o.id === operationId);
  if (!op)
    return toolError("not_found", `There is no operation "${operationId}"; docs_search finds the right one.`, 404);
  if (deps.readOnly && op.method !== "GET")
    return toolError(
      "read_only_mode",
      `${operationId} (${op.method}) changes things and this session is read-only.`,
      403,
    );
  const input = args.arguments ?? {};
  if (typeof input !== "object" || input === null || Array.isArray(input))
    return toolError("validation_failed", `"arguments" must be an object.`);
  // what can cost money is not a way around the task tools' confirmation
  const { confirm, ...unconfirmed } = args;
  if (op.charges && !deps.confirmations.verify(GENERIC_TOOL, unconfirmed, confirm)) {
    const covered = TASK_TOOLS.find((s) => s.billable && s.calls.includes(op.id));
    return ok(
      [
        `CONFIRMATION NEEDED: nothing was done yet. ${op.id} can create or grow something billable, or move money.`,
        covered
          ? `Prefer ${covered.name}, which shows the exact price first.`
          : "Check the price with the person (docs_search 'prices') and the balance with billing_balance.",
        `Once the person agrees, call ${GENERIC_TOOL} again with the same arguments plus confirm: "${deps.confirmations.issue(GENERIC_TOOL, unconfirmed)}" (valid 10 minutes).`,
      ].join("\n"),
    );
  }
  const request = buildRequest(op, input as Record<string, unknown>);
  const { status, body } = await deps.execute(request);
  if (status >= 400) {
    const e = errorOf(status, body);
    return toolError(e.code, e.message, status);
  }
  return ok(body ?? `HTTP ${status}`);
}
