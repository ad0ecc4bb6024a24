/**
 * Text PostgreSQL can store: no NUL (text and jsonb refuse 0x00) and no unpaired UTF-16 surrogate
 * (jsonb refuses it, text silently turns it into U+FFFD). Checked once for every request in app.ts,
 * so no route or service needs to think about it.
 */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const isStorable = (s: string): boolean => !UNSTORABLE.test(s);

/** The dotted path of the first string (value or object key) that cannot be stored, or null. */
export function findUnstorable(value: unknown, path = "", depth = 0): string | null {
  if (typeof value === "string") return isStorable(value) ? null : path;
  if (value === null || typeof value !== "object" || depth > 64 || Buffer.isBuffer(value)) return null;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, v] of entries) {
    const at = path ? `${path}.${key}` : key;
    if (!isStorable(key)) return at;
    const found = findUnstorable(v, at, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/** A storable rendering of untrusted text (for audit targets and logs): unstorable code units become \uXXXX. */
export function storableText(s: string): string {
  return s.replace(new RegExp(UNSTORABLE.source, "g"), (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
