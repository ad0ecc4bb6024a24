import { createHash } from "node:crypto";

/**
 * Object schemas repeat across the OpenAPI document: a pod, a database or a release is answered by several
 * operations, and its parts (health checks, volumes, limits) recur inside them. Each schema that appears more than
 * once, and is large enough that a reference is shorter, is stated once in components.schemas and referenced where it
 * was. Nothing changes in what any operation takes or answers: the shared schema is the one that stood there.
 *
 * Only answers are shared. Request bodies and parameters stay inline, so the generic readers of the document (the
 * CLI's `api`, the MCP tools' input schemas, the fuzzer) see whole request schemas without resolving references.
 *
 * Names are a hint taken from where the schema first stands (the operation, or the property holding it) and a digest
 * of its content, so a name is stable while the schema stays as it is.
 */

type Schema = Record<string, unknown>;
type Doc = {
  paths: Record<
    string,
    Record<string, { operationId?: string; requestBody?: unknown; responses?: Record<string, unknown> }>
  >;
  components?: Record<string, Record<string, unknown> | undefined>;
};

/** below this many characters of JSON, a reference ({"$ref":"#/components/schemas/Name_0123abcd"}) saves too little */
const MIN_SHARED_LENGTH = 160;
const SCHEMA_REF = "#/components/schemas/";

const isSchema = (x: unknown): x is Schema => typeof x === "object" && x !== null && !Array.isArray(x);

/** JSON text with keys in order, so equal schemas written in different orders share one entry. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (!isSchema(value)) return JSON.stringify(value);
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
}

/** the keys under which a schema holds subschemas: one schema, a list of them, or a map of them */
const ONE = ["items", "additionalProperties", "not"];
const LIST = ["anyOf", "oneOf", "allOf"];
const MAP = ["properties"];

/** A structured schema worth a name: an object, an array or a choice (plain strings and numbers stay where they are). */
function shareable(s: Schema): boolean {
  return s.type === "object" || s.type === "array" || Array.isArray(s.anyOf) || Array.isArray(s.oneOf);
}

const pascal = (text: string) =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join("") || "Schema";

/** Calls `visit` on every subschema of `s` with the hint its position gives, children first. */
function mapChildren(s: Schema, hint: string, visit: (child: unknown, hint: string) => unknown): Schema {
  const out: Schema = { ...s };
  for (const key of ONE) if (isSchema(s[key])) out[key] = visit(s[key], key === "items" ? `${hint}Item` : hint);
  for (const key of LIST)
    if (Array.isArray(s[key])) out[key] = (s[key] as unknown[]).map((x, i) => visit(x, `${hint}Option${i + 1}`));
  for (const key of MAP)
    if (isSchema(s[key]))
      out[key] = Object.fromEntries(Object.entries(s[key] as Schema).map(([k, v]) => [k, visit(v, pascal(k))]));
  return out;
}

/** Every body schema (request and successful answers), with the hint its operation and status give. */
function* bodySchemas(doc: Doc): Generator<{ holder: Schema; hint: string }> {
  for (const path of Object.keys(doc.paths).sort()) {
    const ops = doc.paths[path];
    for (const method of Object.keys(ops).sort()) {
      const op = ops[method];
      const name = pascal(op.operationId ?? `${method} ${path}`);
      const bodies: [string, unknown][] = [["Body", op.requestBody]];
      for (const [status, res] of Object.entries(op.responses ?? {}))
        if (/^[23]\d\d$/.test(status)) bodies.push([status, res]);
      for (const [suffix, body] of bodies) {
        if (!isSchema(body) || !isSchema(body.content)) continue;
        for (const media of Object.values(body.content))
          if (isSchema(media) && isSchema(media.schema)) yield { holder: media, hint: `${name}${suffix}` };
      }
    }
  }
}

export function shareBodySchemas(doc: Doc): void {
  // 1. how often each structured schema appears, counting the ones nested in others
  const seen = new Map<string, number>();
  const count = (s: unknown, hint: string): unknown => {
    if (!isSchema(s) || typeof s.$ref === "string") return s;
    mapChildren(s, hint, count);
    if (shareable(s)) {
      const text = canonical(s);
      if (text.length >= MIN_SHARED_LENGTH) seen.set(text, (seen.get(text) ?? 0) + 1);
    }
    return s;
  };
  for (const { holder, hint } of bodySchemas(doc)) count(holder.schema, hint);

  // 2. each repeated one becomes a component (its own repeated parts referenced in turn), named where first met
  const names = new Map<string, string>();
  const shared: Record<string, Schema> = {};
  const hoist = (s: unknown, hint: string): unknown => {
    if (!isSchema(s) || typeof s.$ref === "string") return s;
    const text = shareable(s) ? canonical(s) : "";
    const inner = mapChildren(s, hint, hoist);
    if ((seen.get(text) ?? 0) < 2) return inner;
    let name = names.get(text);
    if (!name) {
      name = `${hint}_${createHash("sha256").update(text).digest("hex").slice(0, 8)}`;
      names.set(text, name);
      shared[name] = inner;
    }
    return { $ref: SCHEMA_REF + name };
  };
  for (const { holder, hint } of bodySchemas(doc)) holder.schema = hoist(holder.schema, hint);

  // 3. a component referenced only once (its repeats all stood inside one shared parent) goes back in place
  const refs = new Map<string, number>();
  const countRefs = (x: unknown): void => {
    if (Array.isArray(x)) x.forEach(countRefs);
    else if (isSchema(x)) {
      if (typeof x.$ref === "string" && x.$ref.startsWith(SCHEMA_REF)) {
        const name = x.$ref.slice(SCHEMA_REF.length);
        refs.set(name, (refs.get(name) ?? 0) + 1);
      } else Object.values(x).forEach(countRefs);
    }
  };
  countRefs(doc.paths);
  countRefs(shared);
  const inline = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(inline);
    if (!isSchema(x)) return x;
    if (typeof x.$ref === "string" && x.$ref.startsWith(SCHEMA_REF)) {
      const name = x.$ref.slice(SCHEMA_REF.length);
      return refs.get(name) === 1 && shared[name] ? inline(shared[name]) : x;
    }
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, inline(v)]));
  };
  for (const { holder } of bodySchemas(doc)) holder.schema = inline(holder.schema);
  const kept = Object.keys(shared)
    .filter((name) => refs.get(name) !== 1)
    .sort();
  const schemas = Object.fromEntries(kept.map((name) => [name, inline(shared[name])]));
  doc.components = { ...doc.components, schemas: { ...doc.components?.schemas, ...schemas } };
}
