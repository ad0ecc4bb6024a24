/**
 * The API's operations read from its OpenAPI document, for clients that are not written per endpoint:
 * the CLI's `platform api <operationId> --field value` and the MCP tools. Each operation gets one flat
 * input (path, query and body fields side by side) and a JSON schema for it, and `buildRequest` puts
 * each field back where the operation takes it. A new route is therefore usable with no client change.
 */
export type JsonSchema = Record<string, unknown>;

interface OpenApiParameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}
interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  security?: unknown[];
  responses?: Record<string, unknown>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: Record<string, Record<string, unknown>>;
  tags?: { name: string; description?: string }[];
}

export interface Operation {
  id: string;
  method: string;
  /** the path template, e.g. /v1/databases/{id} */
  path: string;
  tag: string;
  summary: string;
  description: string;
  /** no bearer token needed */
  public: boolean;
  /** can answer 402: it creates or grows something billable, or moves money (admission, payments) */
  charges: boolean;
  pathParams: string[];
  queryParams: string[];
  /** body fields named one by one (an object body); null when the body is not an object of known fields */
  bodyFields: string[] | null;
  hasBody: boolean;
  /** the flat input: path, query and body fields as properties of one object */
  inputSchema: JsonSchema & { properties: Record<string, JsonSchema>; required: string[] };
}

export interface OperationIndex {
  operations: Operation[];
  byId: Map<string, Operation>;
  tags: { name: string; description: string }[];
}

const METHODS = ["get", "put", "post", "delete", "patch"];

/** the node a local reference (#/components/schemas/Name) points at */
function target(doc: OpenApiDocument, ref: string): unknown {
  const parts = ref
    .replace(/^#\//, "")
    .split("/")
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  return parts.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
}

/**
 * A schema with every local reference replaced by what it points at, so it stands alone (a tool's input schema is read
 * without the document); a reference the document does not hold stays as it is. The document shares repeated schemas
 * as components (#/components/schemas/...); none refers to itself, and a bound on references followed in a row keeps
 * a cycle from recursing forever.
 */
export function inlineRefs(doc: OpenApiDocument, schema: unknown, hops = 0): unknown {
  if (hops > 32 || schema === null || typeof schema !== "object") return schema;
  if (Array.isArray(schema)) return schema.map((s) => inlineRefs(doc, s, hops));
  const ref = (schema as JsonSchema).$ref;
  if (typeof ref === "string" && ref.startsWith("#/")) {
    const found = target(doc, ref);
    if (found !== undefined) return inlineRefs(doc, found, hops + 1);
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, inlineRefs(doc, v, hops)]));
}

/** A copy of the document whose operations read their schemas in place (shared schemas inlined), for generic readers. */
export function inlineSchemaRefs<D extends OpenApiDocument>(doc: D): D {
  const schemas = { paths: {}, components: { schemas: doc.components?.schemas ?? {} } };
  return { ...doc, paths: inlineRefs(schemas, doc.paths) };
}

function resolve(doc: OpenApiDocument, schema: unknown): JsonSchema | undefined {
  return inlineRefs(doc, schema) as JsonSchema | undefined;
}

export function indexOperations(doc: OpenApiDocument): OperationIndex {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op?.operationId) continue;
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      const pathParams: string[] = [];
      const queryParams: string[] = [];
      for (const p of op.parameters ?? []) {
        if (p.in !== "path" && p.in !== "query") continue;
        (p.in === "path" ? pathParams : queryParams).push(p.name);
        properties[p.name] = {
          ...(resolve(doc, p.schema) ?? { type: "string" }),
          ...(p.description ? { description: p.description } : {}),
        };
        if (p.required || p.in === "path") required.push(p.name);
      }
      const content = op.requestBody?.content ?? {};
      const media = content["application/json"] ?? Object.values(content)[0];
      const body = media ? resolve(doc, media.schema) : undefined;
      let bodyFields: string[] | null = null;
      if (body && body.type === "object" && body.properties && typeof body.properties === "object") {
        bodyFields = [];
        for (const [name, schema] of Object.entries(body.properties as Record<string, JsonSchema>)) {
          if (name in properties) continue; // a path or query parameter of the same name wins
          bodyFields.push(name);
          properties[name] = resolve(doc, schema) ?? {};
        }
        for (const name of (body.required as string[] | undefined) ?? [])
          if (bodyFields.includes(name)) required.push(name);
      } else if (body) {
        properties.body = { ...body, description: "the request body" };
        if (op.requestBody?.required) required.push("body");
      }
      operations.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        tag: op.tags?.[0] ?? "other",
        summary: op.summary ?? "",
        description: op.description ?? op.summary ?? "",
        public: Array.isArray(op.security) && op.security.length === 0,
        charges: "402" in (op.responses ?? {}),
        pathParams,
        queryParams,
        bodyFields,
        hasBody: body !== undefined,
        inputSchema: { type: "object", properties, required, additionalProperties: false },
      });
    }
  }
  operations.sort((a, b) => a.tag.localeCompare(b.tag) || a.id.localeCompare(b.id));
  const described = new Map((doc.tags ?? []).map((t) => [t.name, t.description ?? ""]));
  const tags = [...new Set(operations.map((o) => o.tag))]
    .sort()
    .map((name) => ({ name, description: described.get(name) ?? "" }));
  return { operations, byId: new Map(operations.map((o) => [o.id, o])), tags };
}

export interface OperationRequest {
  method: string;
  /** the concrete path, parameters filled in and encoded */
  path: string;
  query: Record<string, unknown>;
  body: unknown;
  /** a raw body's media type (the body is then a Uint8Array, sent as is) */
  contentType?: string;
}

/** Puts each field of a flat input where the operation takes it; unknown fields and missing required ones throw. */
export function buildRequest(op: Operation, input: Record<string, unknown>): OperationRequest {
  const known = new Set(Object.keys(op.inputSchema.properties));
  for (const name of Object.keys(input)) {
    if (!known.has(name))
      throw new TypeError(`${op.id} takes no field "${name}"; it takes: ${[...known].join(", ") || "nothing"}`);
  }
  for (const name of op.inputSchema.required) {
    if (input[name] === undefined) throw new TypeError(`${op.id} needs the field "${name}"`);
  }
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(input[name])));
  const query: Record<string, unknown> = {};
  for (const name of op.queryParams) if (input[name] !== undefined) query[name] = input[name];
  let body: unknown;
  if (op.bodyFields) {
    body = Object.fromEntries(op.bodyFields.filter((f) => input[f] !== undefined).map((f) => [f, input[f]]));
  } else if (op.hasBody) {
    body = input.body;
  }
  return { method: op.method, path, query, body };
}

/**
 * A command-line string as the value the schema asks for: numbers, booleans, arrays (comma-separated
 * or JSON) and objects (JSON). Strings stay strings; a value that does not fit is passed as given and
 * the API's validation names the field.
 */
export function coerceValue(schema: JsonSchema | undefined, raw: string): unknown {
  const types = typeOf(schema);
  if (types.includes("string") || types.length === 0) {
    if (types.length === 0 && /^[[{]/.test(raw.trim())) return tryJson(raw);
    return raw;
  }
  if (types.includes("integer") || types.includes("number")) {
    const n = Number(raw);
    return raw.trim() !== "" && Number.isFinite(n) ? n : raw;
  }
  if (types.includes("boolean"))
    return raw === "true" || raw === "1" || raw === "" ? true : raw === "false" || raw === "0" ? false : raw;
  if (types.includes("array")) {
    if (raw.trim().startsWith("[")) return tryJson(raw);
    const items = schema?.items as JsonSchema | undefined;
    return raw === "" ? [] : raw.split(",").map((x) => coerceValue(items, x.trim()));
  }
  if (types.includes("object")) return tryJson(raw);
  return raw;
}

function typeOf(schema: JsonSchema | undefined): string[] {
  if (!schema) return [];
  if (typeof schema.type === "string") return [schema.type];
  if (Array.isArray(schema.type)) return schema.type as string[];
  const alternatives = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(alternatives)) return [...new Set(alternatives.flatMap((s) => typeOf(s)))];
  if (Array.isArray(schema.enum)) return [...new Set((schema.enum as unknown[]).map((v) => typeof v))];
  return [];
}

function tryJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
