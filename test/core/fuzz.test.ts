/**
 * Schema fuzzer: fast-check drives every operation of /v1/openapi.json with requests made from its own schemas -
 * valid, malformed, oversized, NUL and unpaired-surrogate strings, wrong types, extra fields, odd path ids, wrong content
 * types - and asserts that the server never answers 5xx (except a documented 501/503) and every error is {"error":
 * {"code","message"}} with a status and code the operation documents. FUZZ_RUNS (per operation), FUZZ_SEED reproduce.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { FLEET_TOKEN, OPERATOR_TOKEN, call, createTestApp, signup, type TestApp } from "../helpers/app.js";
import { inlineSchemaRefs } from "../../packages/sdk/src/operations.js";

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  nullable?: boolean;
};
interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema: Schema;
}
interface DocResponse {
  /** error answers are shared components: #/components/responses/<name> */
  $ref?: string;
  content?: Record<string, { schema: { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } } }>;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, DocResponse>;
}

const RUNS = Number(process.env.FUZZ_RUNS ?? 30);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const BUDGET_MS = Number(process.env.FUZZ_BUDGET_MS ?? 60_000);

const NASTY_STRINGS = [
  "",
  " ",
  "a\u0000b",
  "\u0000",
  "a\ud800b",
  "\udc00",
  "\ud800",
  "%00",
  "%ED%A0%80",
  "🙂",
  "\u202e",
  "../../etc/passwd",
  "' OR 1=1 --",
  "null",
  "0",
  "-1",
  "1e309",
  "9".repeat(40),
  "x".repeat(5000),
  "é".repeat(300),
  "<script>",
  "\r\nX-Injected: 1",
];
const NASTY_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  -0,
  2 ** 53 + 2,
  -(2 ** 63),
  1e308,
  [],
  [null],
  {},
  { a: 1 },
  "1",
  ...NASTY_STRINGS,
];

const nasty = fc.oneof(
  fc.constantFrom(...NASTY_VALUES),
  fc.string({ unit: "binary", maxLength: 50 }),
  fc.string({ unit: "binary", minLength: 4097, maxLength: 4200 }),
);

const types = (s: Schema): string[] => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);

/** Values the schema accepts (or nearly: patterns are not honoured, which is one more malformed case). */
function valid(s: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!s || depth > 6) return fc.constant({});
  const options: fc.Arbitrary<unknown>[] = [];
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) options.push(fc.constantFrom(...s.enum));
  else if (s.anyOf || s.oneOf) options.push(...(s.anyOf ?? s.oneOf)!.map((x) => valid(x, depth + 1)));
  else if (s.allOf) options.push(valid(Object.assign({}, ...s.allOf), depth + 1));
  else {
    const t = types(s)[0] ?? "object";
    if (t === "string") {
      const max = Math.min(s.maxLength ?? 50, 60);
      const min = Math.min(s.minLength ?? 0, max);
      if (s.format === "uuid") options.push(fc.uuid());
      else if (s.format === "date-time")
        options.push(
          fc
            .date({ min: new Date("1900-01-01"), max: new Date("2200-01-01"), noInvalidDate: true })
            .map((d) => d.toISOString()),
        );
      else if (s.format === "date")
        options.push(
          fc
            .date({ min: new Date("2000-01-01"), max: new Date("2100-01-01"), noInvalidDate: true })
            .map((d) => d.toISOString().slice(0, 10)),
        );
      else if (s.format === "email") options.push(fc.emailAddress());
      else
        options.push(
          fc.string({ minLength: min, maxLength: max }),
          fc.stringMatching(/^[a-z][a-z0-9-]{2,20}$/).filter((x) => x.length >= min && x.length <= max),
        );
    } else if (t === "integer")
      options.push(
        fc.integer({ min: Math.max(s.minimum ?? -1e9, -(2 ** 31)), max: Math.min(s.maximum ?? 1e9, 2 ** 31) }),
        fc.constantFrom(s.minimum ?? 0, s.maximum ?? 0),
      );
    else if (t === "number") options.push(fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true }));
    else if (t === "boolean") options.push(fc.boolean());
    else if (t === "null") options.push(fc.constant(null));
    else if (t === "array")
      options.push(
        fc.array(valid(s.items, depth + 1), {
          minLength: s.minItems ?? 0,
          maxLength: Math.min(s.maxItems ?? 3, Math.max(3, s.minItems ?? 0)),
        }),
      );
    else {
      const props = s.properties ?? {};
      const required = new Set(s.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) record[k] = valid(v, depth + 1);
      options.push(fc.record(record, { requiredKeys: [...required].filter((k) => k in props) }));
    }
  }
  if (s.nullable) options.push(fc.constant(null));
  return fc.oneof(...options);
}

/** A valid value with one thing wrong somewhere: a field replaced by a nasty value, an extra field, a field dropped. */
function malformed(s: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!s || depth > 4) return nasty;
  const props = s.properties ?? {};
  const keys = Object.keys(props);
  const options: fc.Arbitrary<unknown>[] = [nasty];
  if (keys.length) {
    options.push(
      fc.tuple(valid(s), fc.constantFrom(...keys), nasty).map(([v, k, bad]) => ({ ...(v as object), [k]: bad })),
      fc
        .tuple(valid(s), fc.constantFrom(...keys))
        .chain(([v, k]) => malformed(props[k], depth + 1).map((bad) => ({ ...(v as object), [k]: bad }))),
      fc.tuple(valid(s), fc.constantFrom(...keys)).map(([v, k]) => {
        const o = { ...(v as object) } as Record<string, unknown>;
        delete o[k];
        return o;
      }),
    );
  }
  if (types(s).includes("object") || keys.length) {
    options.push(
      fc
        .tuple(valid(s), fc.constantFrom("zz_unknown", "__proto__", "constructor", "a\u0000b", "a\ud800b"), nasty)
        .map(([v, k, bad]) => ({ ...(v as object), [k]: bad })),
    );
  }
  if (s.items)
    options.push(
      fc.array(malformed(s.items, depth + 1), { minLength: 1, maxLength: 3 }),
      fc.constant(Array.from({ length: (s.maxItems ?? 1000) + 1 }, () => null)),
    );
  return fc.oneof(...options);
}

/** Percent-encodes anything, unpaired surrogates included (as the invalid UTF-8 a careless client would send). */
function enc(value: unknown): string {
  const s = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  let out = "";
  for (const ch of s) {
    try {
      out += encodeURIComponent(ch);
    } catch {
      out += "%ED%A0%80";
    }
  }
  return out;
}

const ODD_IDS = [
  "abc\u0000def",
  "a\ud800",
  "%ED%A0%80",
  "..",
  ".",
  "a/b",
  "%2F",
  " ",
  "x".repeat(101),
  "x".repeat(300),
  "-1",
  "0",
  "null",
  "🙂",
];

interface FuzzRequest {
  method: string;
  url: string;
  body?: string;
  contentType?: string;
  token?: string;
  headers?: Record<string, string>;
}

function requests(
  path: string,
  method: string,
  op: Operation,
  tokens: { user: () => string },
): fc.Arbitrary<FuzzRequest> {
  const params = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === "path");
  const query = params.filter((p) => p.in === "query");
  const bodySchema = op.requestBody?.content["application/json"]?.schema;
  const pathArb = fc
    .tuple(...pathParams.map((p) => fc.oneof(valid(p.schema), fc.constantFrom(...ODD_IDS), nasty)))
    .map((values) => pathParams.reduce((url, p, i) => url.replace(`{${p.name}}`, enc(values[i]) || "x"), path));
  const queryArb = fc
    .tuple(
      ...query.map((p) =>
        fc.option(fc.oneof({ weight: 3, arbitrary: valid(p.schema) }, { weight: 1, arbitrary: nasty }), {
          nil: undefined,
        }),
      ),
    )
    .map((values) =>
      query
        .map((p, i) => (values[i] === undefined ? "" : `${p.name}=${enc(values[i])}`))
        .filter(Boolean)
        .join("&"),
    );
  const bodyArb: fc.Arbitrary<{ body?: string; contentType?: string }> =
    method === "GET"
      ? fc.constant({})
      : fc.oneof(
          {
            weight: 3,
            arbitrary: valid(bodySchema).map((b) => ({ body: JSON.stringify(b), contentType: "application/json" })),
          },
          {
            weight: 4,
            arbitrary: malformed(bodySchema).map((b) => ({
              body: JSON.stringify(b) ?? "null",
              contentType: "application/json",
            })),
          },
          {
            weight: 1,
            arbitrary: fc
              .constantFrom("{", "[1,", '{"a":\u0000}', '"\\ud800"', '{"a":1}{', "", "nul", '{"a":' + "[".repeat(5000))
              .map((b) => ({ body: b, contentType: "application/json" })),
          },
          {
            weight: 1,
            arbitrary: fc
              .constantFrom(
                "text/plain",
                "application/xml",
                "application/x-www-form-urlencoded",
                "multipart/form-data; boundary=x",
                "application/json; charset=latin1",
              )
              .map((ct) => ({ body: '{"a":1}', contentType: ct })),
          },
          { weight: 1, arbitrary: fc.constant({}) },
        );
  const idemArb =
    method === "POST"
      ? fc.option(fc.constantFrom("k1", "", " ", "é", "x".repeat(300)), { nil: undefined })
      : fc.constant(undefined);
  return fc
    .record({
      path: pathArb,
      query: queryArb,
      body: bodyArb,
      idem: idemArb,
      auth: fc.constantFrom("right", "right", "right", "none", "wrong"),
    })
    .map((r) => ({
      method,
      url: r.query ? `${r.path}?${r.query}` : r.path,
      body: r.body.body,
      contentType: r.body.contentType,
      token:
        r.auth === "none"
          ? undefined
          : r.auth === "wrong"
            ? "op_u_not-a-token"
            : path.startsWith("/v1/operator")
              ? OPERATOR_TOKEN
              : path.startsWith("/v1/fleet")
                ? FLEET_TOKEN
                : tokens.user(),
      headers: r.idem === undefined ? undefined : { "idempotency-key": r.idem },
    }));
}

describe("schema fuzzer over every operation of /v1/openapi.json", { timeout: BUDGET_MS * 4 }, () => {
  let t: TestApp;
  let doc: { paths: Record<string, Record<string, Operation>>; components: { responses: Record<string, DocResponse> } };
  before(async () => {
    t = await createTestApp();
    doc = inlineSchemaRefs((await call(t.app, { url: "/v1/openapi.json" })).json());
  });
  after(async () => {
    await t?.close();
  });

  test(`no 5xx but a documented 501/503, and one error shape, for ${RUNS} requests per operation`, async () => {
    const deadline = Date.now() + BUDGET_MS;
    const seen = new Map<string, number>();
    let requestsSent = 0;
    let token = (await signup(t.app)).token;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        // a live stream never ends its answer (inject would wait): its route says `streams` (x-streams here)
        if ((op as any)["x-streams"]) continue;
        // an account deleted or signed out must not blind the next operations (a sign-up each was a third of the time)
        const me = await t.app.inject({ url: "/v1/me", headers: { authorization: `Bearer ${token}` } });
        if (me.statusCode !== 200) token = (await signup(t.app)).token;
        const perOp = Math.max(3, Math.floor(RUNS * Math.min(1, (deadline - Date.now()) / BUDGET_MS)));
        const out = await fc.check(
          fc.asyncProperty(requests(path, method.toUpperCase(), op, { user: () => token }), async (req) => {
            const headers: Record<string, string> = { ...req.headers };
            if (req.token) headers.authorization = `Bearer ${req.token}`;
            if (req.contentType) headers["content-type"] = req.contentType;
            const res = await t.app.inject({ method: req.method as "GET", url: req.url, headers, payload: req.body });
            requestsSent++;
            const where = `${req.method} ${req.url} ${req.contentType ?? ""} ${(req.body ?? "").slice(0, 300)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
            const given = op.responses[String(res.statusCode)];
            // error answers are shared components: follow the reference
            const documented = given?.$ref ? doc.components.responses[given.$ref.split("/").pop()!] : given;
            if (res.statusCode >= 500) {
              assert.ok([501, 503].includes(res.statusCode) && documented, `server error: ${where}`);
            }
            if (res.statusCode >= 400) {
              const body = JSON.parse(res.body);
              assert.deepEqual(Object.keys(body), ["error"], `error shape: ${where}`);
              assert.deepEqual(Object.keys(body.error).sort(), ["code", "message"], `error shape: ${where}`);
              assert.equal(typeof body.error.code, "string", where);
              assert.equal(typeof body.error.message, "string", where);
              assert.ok(documented, `undocumented status: ${where}`);
              const codes = documented.content?.["application/json"]?.schema.properties?.error?.properties?.code?.enum;
              assert.ok(
                !codes || codes.includes(body.error.code),
                `code ${body.error.code} is not documented for ${res.statusCode}: ${where}`,
              );
            }
            seen.set(String(res.statusCode), (seen.get(String(res.statusCode)) ?? 0) + 1);
            // a valid sign-out or account deletion ends the token: continue with a new account
            if (res.statusCode < 300 && /logout|delete/.test(path)) token = (await signup(t.app)).token;
          }),
          { numRuns: perOp, seed: SEED, endOnFailure: true },
        );
        if (out.failed) {
          const message = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
          assert.fail(`${op.operationId}: ${message.slice(0, 2000)}\nreproduce with FUZZ_SEED=${out.seed}`);
        }
      }
    }
    console.log(
      `fuzz: ${requestsSent} requests over ${Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0)} operations; statuses ${JSON.stringify(Object.fromEntries([...seen].sort()))}`,
    );
  });
});
