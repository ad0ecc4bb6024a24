import { createHash } from "node:crypto";
import type { RouteOptions } from "fastify";
import { ERROR_CATALOG, type ErrorCode } from "./errors.js";
import type { AuthRule } from "./auth-rule.js";
import { guardErrorsOf } from "../auth/scopes.js";

/**
 * Platform-wide defaults applied to every route's schema when it is registered (app.ts, onRoute).
 * The same schema validates requests and produces /v1/openapi.json, so a limit added here is both
 * enforced and documented: every string has a maxLength, every integer a format and bounds, every
 * array a maxItems, every open map a maxProperties. Areas state tighter limits where they know them.
 */
interface Limits {
  string: number;
  items: number;
  properties: number;
}
/** What a client may send: generous for free text, small enough that nothing unbounded reaches a service. */
export const REQUEST_LIMITS: Limits = { string: 4096, items: 1000, properties: 100 };
/** What the server answers: documentation only (responses are serialized, not validated). */
export const RESPONSE_LIMITS: Limits = { string: 1_048_576, items: 100_000, properties: 10_000 };

/** Formats carry their own length. */
const FORMAT_MAX_LENGTH: Record<string, number> = {
  uuid: 36,
  "date-time": 64,
  date: 10,
  time: 32,
  email: 254,
  uri: 2048,
  "uri-reference": 2048,
  hostname: 253,
  ipv4: 15,
  ipv6: 45,
  byte: 1_398_104,
};
const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

type Schema = Record<string, unknown>;
const isSchema = (x: unknown): x is Schema => typeof x === "object" && x !== null && !Array.isArray(x);
const hasType = (s: Schema, t: string) => s.type === t || (Array.isArray(s.type) && s.type.includes(t));

/** A copy of `schema` with the platform's defaults filled in where the area left them open. */
export function constrain(schema: unknown, limits: Limits): unknown {
  if (Array.isArray(schema)) return schema.map((s) => constrain(s, limits));
  if (!isSchema(schema)) return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "content" && isSchema(value)) {
      // a response or body given per media type: {content: {"text/plain": {schema}}}
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, isSchema(v) ? { ...v, schema: constrain(v.schema, limits) } : v]),
      );
    } else if (key === "properties" || key === "patternProperties" || key === "definitions" || key === "$defs") {
      out[key] = isSchema(value)
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, constrain(v, limits)]))
        : value;
    } else if (
      ["items", "additionalProperties", "not", "anyOf", "oneOf", "allOf", "if", "then", "else", "contains"].includes(
        key,
      )
    ) {
      out[key] = constrain(value, limits);
    } else {
      out[key] = value;
    }
  }
  const closed = out.enum !== undefined || out.const !== undefined;
  if (hasType(out, "string") && !closed && out.maxLength === undefined) {
    out.maxLength = FORMAT_MAX_LENGTH[String(out.format)] ?? limits.string;
  }
  if (hasType(out, "integer") && !closed) {
    if (out.minimum === undefined && out.exclusiveMinimum === undefined) out.minimum = -Number.MAX_SAFE_INTEGER;
    if (out.maximum === undefined && out.exclusiveMaximum === undefined) out.maximum = Number.MAX_SAFE_INTEGER;
    if (out.format === undefined) {
      const lo = Number(out.minimum ?? out.exclusiveMinimum);
      const hi = Number(out.maximum ?? out.exclusiveMaximum);
      out.format = lo >= INT32_MIN && hi <= INT32_MAX ? "int32" : "int64";
    }
  }
  if (hasType(out, "array") && out.maxItems === undefined) out.maxItems = limits.items;
  const open =
    (out.additionalProperties !== undefined && out.additionalProperties !== false) ||
    out.patternProperties !== undefined;
  if (hasType(out, "object") && open && out.maxProperties === undefined) {
    out.maxProperties = limits.properties;
  }
  return out;
}

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * The catalog codes a route can answer: what its declaration implies (auth rule, path parameters,
 * bodies, idempotency) plus the codes the area declares in `config.errors`. A route whose area has
 * not declared its codes yet is documented with the whole catalog, which is true if not precise.
 */
export function errorCodesOf(route: RouteOptions, admissionCodes: readonly ErrorCode[] = []): ErrorCode[] {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const auth = route.config?.auth as AuthRule | undefined;
  const codes = new Set<ErrorCode>([
    "invalid_request",
    "request_timeout",
    "headers_too_large",
    "too_many_requests",
    "internal",
    "service_unavailable",
  ]);
  if (route.url.includes(":")) codes.add("not_found").add("uri_too_long");
  if (methods.some((m) => MUTATING.has(m)))
    codes.add("bad_json").add("payload_too_large").add("unsupported_media_type");
  if (methods.includes("POST")) codes.add("idempotency_key_reused").add("idempotency_in_progress");
  if (auth && !("public" in auth)) codes.add("auth_required");
  if (auth && ("scope" in auth || "account" in auth)) codes.add("scope_insufficient");
  // a change to a company asset the caller is not responsible for (http/authenticate.ts, mayChangeInstance)
  const changesInstance = auth && "scope" in auth && auth.scope.endsWith(":write") && typeof auth.instance === "object";
  if (changesInstance && methods.some((m) => MUTATING.has(m))) codes.add("forbidden_role");
  // /v1/org routes: 404 outside an organization, 403 below the declared role (orgs/guard.ts)
  const orgRole = route.config?.orgRole as string | undefined;
  if (orgRole) codes.add("not_found");
  if (orgRole && orgRole !== "member") codes.add("forbidden_role");
  if (route.config?.admits) for (const code of admissionCodes) codes.add(code);
  // what the resource's route guard refuses with (auth/scopes.ts ScopeResource.guardErrors)
  if (auth && "scope" in auth)
    for (const code of guardErrorsOf(auth.scope.split(":")[0])) if (code in ERROR_CATALOG) codes.add(code as ErrorCode);
  for (const code of Object.values(route.config?.validationCodes ?? {}))
    if (code in ERROR_CATALOG) codes.add(code as ErrorCode);
  const declared = route.config?.errors;
  const all = Object.keys(ERROR_CATALOG) as ErrorCode[];
  for (const code of declared ?? all) codes.add(code);
  // statuses an area documents itself (e.g. 502 from a provider) bring their catalog codes
  for (const status of Object.keys((route.schema as { response?: object } | undefined)?.response ?? {})) {
    if (/^[45]\d\d$/.test(status))
      for (const code of all) if (ERROR_CATALOG[code][0] === Number(status)) codes.add(code);
  }
  return all.filter((c) => codes.has(c));
}

/** Headers of draft-ietf-httpapi-ratelimit-headers-09, as rate-limit.ts writes them. */
const RATE_LIMIT_HEADERS = {
  RateLimit: {
    type: "string",
    maxLength: 64,
    pattern: '^"default";r=\\d+;t=\\d+$',
    description:
      'Requests left in the current window and seconds until it resets, e.g. `"default";r=97;t=1`. Sent on every answer to a request that reached the rate limiter.',
  },
  "RateLimit-Policy": {
    type: "string",
    maxLength: 64,
    pattern: '^"default";q=\\d+;w=\\d+$',
    description:
      'The quota per window, e.g. `"default";q=100;w=1`: 100 requests per second per account (or per client address without a token).',
  },
};
const RETRY_AFTER = {
  type: "string",
  maxLength: 10,
  pattern: "^\\d+$",
  description: "Seconds to wait before retrying.",
};

export function responseHeaders(status: string): Record<string, unknown> | undefined {
  if (!/^[24]/.test(status)) return undefined;
  return status === "429" ? { ...RATE_LIMIT_HEADERS, "Retry-After": RETRY_AFTER } : { ...RATE_LIMIT_HEADERS };
}

/** The one error body, its `code` limited to what this status can carry for the route. */
export function errorResponse(status: number, codes: ErrorCode[]): Schema {
  const description = `Error ${status}: \`error.code\` is one of the ${codes.length === 1 ? "code" : `${codes.length} codes`} its enum lists (meanings: the error catalog in the document's description).`;
  return {
    type: "object",
    required: ["error"],
    additionalProperties: false,
    description,
    properties: {
      error: {
        type: "object",
        required: ["code", "message"],
        additionalProperties: false,
        properties: {
          code: { type: "string", enum: codes, description: "Stable error code from the catalog (see /v1/manual)." },
          message: {
            type: "string",
            maxLength: 1000,
            description: "What went wrong, in English, naming the field where one is at fault.",
          },
        },
      },
    },
  };
}

/** Applies the defaults, the per-status error responses, the rate-limit headers and the security requirement to one route. */
export function documentRoute(route: RouteOptions, admissionCodes: readonly ErrorCode[] = []): void {
  const schema = (route.schema ??= {}) as Schema & {
    response?: Record<string, unknown>;
    security?: unknown;
    summary?: string;
    description?: string;
  };
  for (const part of ["body", "querystring", "params", "headers"] as const) {
    if (schema[part] !== undefined) schema[part] = constrain(schema[part], REQUEST_LIMITS);
  }
  const response: Record<string, unknown> = {};
  for (const [status, s] of Object.entries(schema.response ?? {})) {
    if (!/^[45]/.test(status)) response[status] = constrain(s, RESPONSE_LIMITS);
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(route, admissionCodes)) {
    const status = ERROR_CATALOG[code][0];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0]))
    response[String(status)] = errorResponse(status, codes);
  for (const [status, s] of Object.entries(response)) {
    const headers = responseHeaders(status);
    if (headers && isSchema(s)) response[status] = { ...s, headers };
  }
  schema.response = response;
  schema.description ??= schema.summary;
  const auth = route.config?.auth as AuthRule | undefined;
  if (auth) schema.security ??= "public" in auth ? [] : [{ bearer: [] }];
}

/** The catalog as a Markdown table, once in the document's description. */
export function catalogMarkdown(): string {
  const rows = (Object.keys(ERROR_CATALOG) as ErrorCode[]).map(
    (c) => `| \`${c}\` | ${ERROR_CATALOG[c][0]} | ${ERROR_CATALOG[c][1]} |`,
  );
  return ["| code | status | meaning |", "| --- | --- | --- |", ...rows].join("\n");
}

interface DocResponse {
  headers?: Record<string, unknown>;
}
interface Doc {
  components?: { headers?: Record<string, unknown> };
  paths: Record<string, Record<string, { responses?: Record<string, DocResponse> }>>;
}

/** Every response's rate-limit headers point at one definition in components.headers instead of repeating it. */
export function shareHeaders(doc: Doc): void {
  const shared: Record<string, unknown> = {};
  for (const ops of Object.values(doc.paths)) {
    for (const op of Object.values(ops)) {
      for (const res of Object.values(op.responses ?? {})) {
        for (const [name, header] of Object.entries(res.headers ?? {})) {
          shared[name] ??= header;
          res.headers![name] = { $ref: `#/components/headers/${name}` };
        }
      }
    }
  }
  doc.components = { ...doc.components, headers: { ...doc.components?.headers, ...shared } };
}

interface DocOperation {
  responses?: Record<string, unknown>;
}

/**
 * Error answers repeat across operations (the same status with the same codes): each distinct one is stated once in
 * components.responses, named by its status and a digest of its content (stable as routes are added), and every
 * operation points at it. The document keeps every operation's exact codes at a third of the size.
 */
export function shareErrorResponses(doc: {
  components?: { responses?: Record<string, unknown> };
  paths: Record<string, Record<string, DocOperation>>;
}): void {
  const shared: Record<string, unknown> = {};
  for (const ops of Object.values(doc.paths)) {
    for (const op of Object.values(ops)) {
      for (const [status, res] of Object.entries(op.responses ?? {})) {
        if (!/^[45]\d\d$/.test(status)) continue;
        const text = JSON.stringify(res);
        const name = `Error${status}_${createHash("sha256").update(text).digest("hex").slice(0, 10)}`;
        shared[name] ??= res;
        op.responses![status] = { $ref: `#/components/responses/${name}` };
      }
    }
  }
  doc.components = { ...doc.components, responses: { ...doc.components?.responses, ...shared } };
}
