/**
 * Task tools: what an agent asks for ("create a database", "read this app's logs"), each with a short description
 * and a small input schema, each calling the platform's own operations as the caller. Their annotations are
 * derived from the operations they call (annotations.ts); billable ones ask for confirmation first (guard.ts).
 */
import type { JsonSchema, OperationIndex } from "../operations.js";

export type Group = "account" | "databases" | "apps" | "sites" | "buckets" | "domains" | "builds" | "org" | "docs";

/** What a task tool gets to do its work: the platform's operations with the caller's key. */
export interface TaskContext {
  /** one operation by operationId, with its flat input; throws PlatformCallError on an error answer */
  call(operationId: string, input?: Record<string, unknown>): Promise<any>;
  /** marks text as untrusted data (logs, rows, command output) */
  untrusted(label: string, content: string): string;
  readOnly: boolean;
}

/** What a billable call would create or grow, priced from the billing catalog before it runs. */
export interface Billable {
  kind: string;
  size: string;
  /** storage kept, in GB, where it is priced per GB */
  storageGb?: number;
}

export interface TaskSpec {
  name: string;
  group: Group;
  description: string;
  /** the input's fields: a JSON schema, or [operationId, field] to take the operation's own schema of it */
  input: Record<string, JsonSchema | [string, string, string?]>;
  required?: string[];
  /** every operation the tool may call: its annotations derive from them (and the annotation test checks them) */
  calls: string[];
  /** destroys or overwrites data beyond what the methods say (a password rotation, a restore, arbitrary SQL) */
  destructive?: boolean;
  /** reaches outside the platform (DNS, remote registries) */
  openWorld?: boolean;
  /** the tool also has a read-only form, offered in read-only mode (run_sql without write) */
  readOnlyVariant?: { drop: string[]; calls: string[]; description: string };
  /** why the call needs the person's agreement beyond money (DDL), or null */
  confirmation?: (args: Record<string, any>) => string | null;
  /** what the call would bill; null when free or when it bills nothing new */
  billable?: (args: Record<string, any>) => Billable | null;
  run(ctx: TaskContext, args: Record<string, any>): Promise<unknown>;
}

/** Operations the API serves for the MCP tools only (src/mcp/routes.ts), hidden from the OpenAPI document. */
export const HIDDEN_OPERATIONS: Record<
  string,
  { method: string; path: string; pathParams: string[]; readOnly?: boolean }
> = {
  // a POST only because SQL is a body; its transaction is READ ONLY, so it counts as a read
  mcpRunSql: { method: "POST", path: "/v1/mcp/databases/{id}/sql", pathParams: ["id"], readOnly: true },
  mcpRunSqlWrite: { method: "POST", path: "/v1/mcp/databases/{id}/sql-write", pathParams: ["id"] },
  mcpPrices: { method: "GET", path: "/v1/mcp/prices", pathParams: [] },
};

/** The method an operation's effect has: its own, or GET for a hidden operation that only reads. */
export function methodOf(index: OperationIndex, operationId: string): string {
  const hidden = HIDDEN_OPERATIONS[operationId];
  const op = index.byId.get(operationId) ?? hidden;
  if (!op) throw new Error(`task tool calls an unknown operation ${operationId}`);
  return hidden?.readOnly ? "GET" : op.method;
}

export interface ToolAnnotations {
  title?: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * From the methods of the operations a tool calls: GET only → read-only (and idempotent); any DELETE, or a
 * tool that overwrites data, → destructive; only GET/PUT/DELETE → idempotent. openWorld only where the
 * platform reaches outside itself (DNS checks, pulls from remote registries).
 */
export function deriveAnnotations(
  methods: string[],
  flags: { destructive?: boolean; openWorld?: boolean; title?: string },
): ToolAnnotations {
  const readOnly = methods.every((m) => m === "GET");
  return {
    ...(flags.title ? { title: flags.title } : {}),
    readOnlyHint: readOnly,
    destructiveHint: !readOnly && (methods.includes("DELETE") || !!flags.destructive),
    idempotentHint: methods.every((m) => m === "GET" || m === "PUT" || m === "DELETE"),
    openWorldHint: !!flags.openWorld,
  };
}

const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: "string", description, ...extra });
const int = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: "integer", description, ...extra });
const bool = (description: string): JsonSchema => ({ type: "boolean", description });
export const s = { str, int, bool };

/** The confirmation field billable tools take. */
export const CONFIRM_FIELD: JsonSchema = {
  type: "string",
  description: "the confirmation token a first call answered with, once the person agreed to the price",
};

export function resolveInput(
  index: OperationIndex,
  spec: Pick<TaskSpec, "input" | "required" | "billable" | "confirmation">,
  drop: string[] = [],
): JsonSchema & { type: "object" } {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, given] of Object.entries(spec.input)) {
    if (drop.includes(name)) continue;
    if (Array.isArray(given)) {
      const [opId, field, description] = given;
      const schema = index.byId.get(opId)?.inputSchema.properties[field];
      if (!schema) throw new Error(`task input ${name}: ${opId} has no field ${field}`);
      properties[name] = description ? { ...schema, description } : schema;
    } else properties[name] = given;
  }
  if ((spec.billable || spec.confirmation) && !drop.includes("confirm")) properties.confirm = CONFIRM_FIELD;
  return {
    type: "object",
    properties,
    ...(spec.required?.length ? { required: spec.required.filter((r) => !drop.includes(r)) } : {}),
    additionalProperties: false,
  };
}
