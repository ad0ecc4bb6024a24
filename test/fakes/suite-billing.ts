import type { FakeRequest, FakeResponse } from "./http.js";

export interface FakeAllowance {
  limit: number;
  used: number;
  resetsAt: string | null;
  contact: string | null;
}

export interface FakeUsageRecord {
  recordId: string;
  key: string;
  companyId: string;
  userId: string;
  category: string;
  quantity: number;
  unit: string;
  hour: string;
}

/**
 * The marketplace-style metering API (src/suite/README.md, "The suite's API shape"): per-user allowances a test sets
 * (`setAllowance`), usage records kept by Idempotency-Key (the same key again answers the first record with
 * duplicate: true and is counted once; the same key with another body is 409), each record's quantity added to the
 * user's `used`. `failNext` makes the next calls answer 503. Answers null for paths it does not serve.
 */
export function fakeSuiteBilling() {
  const allowances = new Map<string, FakeAllowance>();
  const records = new Map<string, FakeUsageRecord>();
  /** every POST of a usage record, duplicates included */
  const posts: { key: string; duplicate: boolean }[] = [];
  let failures = 0;
  const userKey = (companyId: string, userId: string) => `${companyId}/${userId}`;

  const allowanceOf = (companyId: string, userId: string): FakeAllowance | null =>
    allowances.get(userKey(companyId, userId)) ?? null;

  return {
    records,
    posts,
    /** a user's allowance (limit in KRW; used starts at `used`, default 0) */
    setAllowance(companyId: string, userId: string, a: Partial<FakeAllowance> & { limit: number }) {
      const prev = allowanceOf(companyId, userId);
      allowances.set(userKey(companyId, userId), {
        limit: a.limit,
        used: a.used ?? prev?.used ?? 0,
        resetsAt: a.resetsAt ?? prev?.resetsAt ?? null,
        contact: a.contact ?? prev?.contact ?? null,
      });
    },
    allowance: allowanceOf,
    /** the next `n` calls answer 503 */
    failNext(n = 1) {
      failures = n;
    },
    handle: async (req: FakeRequest): Promise<FakeResponse | null> => {
      const url = new URL(req.path, "http://suite");
      if (!url.pathname.startsWith("/metering/v1/")) return null;
      if (failures > 0) {
        failures--;
        return { status: 503, body: { code: "UNAVAILABLE", description: "metering is down" } };
      }
      const allowanceMatch = /^\/metering\/v1\/allowances\/([^/]+)$/.exec(url.pathname);
      if (req.method === "GET" && allowanceMatch) {
        const companyId = url.searchParams.get("companyId") ?? "";
        const a = allowanceOf(companyId, decodeURIComponent(allowanceMatch[1]));
        if (!a) return { status: 404, body: { code: "NOT_FOUND", description: "no such user" } };
        return {
          status: 200,
          body: { limit: a.limit, used: a.used, remaining: a.limit - a.used, resetsAt: a.resetsAt, contact: a.contact },
        };
      }
      if (req.method === "POST" && url.pathname === "/metering/v1/usage-records") {
        const key = req.headers["idempotency-key"];
        if (typeof key !== "string" || !key)
          return { status: 400, body: { code: "BAD_REQUEST", description: "Idempotency-Key is required" } };
        const b = JSON.parse(req.raw) as Omit<FakeUsageRecord, "recordId" | "key">;
        if (!b.companyId || !b.userId || !Number.isInteger(b.quantity) || b.quantity <= 0 || b.unit !== "KRW")
          return { status: 400, body: { code: "BAD_REQUEST", description: "bad usage record" } };
        const first = records.get(key);
        if (first) {
          const same =
            first.companyId === b.companyId &&
            first.userId === b.userId &&
            first.quantity === b.quantity &&
            first.hour === b.hour &&
            first.category === b.category;
          if (!same) return { status: 409, body: { code: "CONFLICT", description: "key reused with another record" } };
          posts.push({ key, duplicate: true });
          return { status: 201, body: { recordId: first.recordId, duplicate: true } };
        }
        const rec: FakeUsageRecord = { ...b, key, recordId: `ur_${records.size + 1}` };
        records.set(key, rec);
        posts.push({ key, duplicate: false });
        const a = allowanceOf(b.companyId, b.userId);
        if (a) a.used += b.quantity;
        return { status: 201, body: { recordId: rec.recordId, duplicate: false } };
      }
      return { status: 404, body: { code: "NOT_FOUND", description: url.pathname } };
    },
  };
}
export type FakeBilling = ReturnType<typeof fakeSuiteBilling>;
