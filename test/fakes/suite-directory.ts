import type { FakeRequest, FakeResponse } from "./http.js";

/** An org unit as a test sets it; served as NAVER WORKS' {orgUnitId, orgUnitName, parentOrgUnitId}. */
export interface FakeUnit {
  id: string;
  name: string;
  parentId?: string | null;
}

/** A user as a test sets it; `units` are the user's org units, the primary one first. */
export interface FakeUser {
  userId: string;
  email: string;
  lastName?: string;
  firstName?: string;
  units: string[];
}

export interface FakeCompany {
  units: FakeUnit[];
  users: FakeUser[];
}

/**
 * The NAVER WORKS-style directory (src/suite/README.md, "The suite's API shape"): `GET /v1.0/orgunits`,
 * `GET /v1.0/users` (cursor pages of `count`, at most 100) and `GET /v1.0/users/{userId}` (404 when not listed), per
 * company (`domainId`). Tests set each company's units and users (mutable, read at every call), may turn on a rate
 * limit (a call sooner than 1/rps after the last one served is 429 with Retry-After) and read the call counts.
 */
export function fakeSuiteDirectory() {
  const companies = new Map<string, FakeCompany>();
  const calls = { orgunits: 0, users: 0, user: 0, limited: 0 };
  let rateLimit: { rps: number; retryAfterSeconds: number } | null = null;
  let lastServed = 0;
  let held: Promise<void> | null = null;

  const unitView = (u: FakeUnit) => ({ orgUnitId: u.id, orgUnitName: u.name, parentOrgUnitId: u.parentId ?? null });
  const userView = (company: string, u: FakeUser) => ({
    userId: u.userId,
    email: u.email,
    userName: { lastName: u.lastName ?? "", firstName: u.firstName ?? u.email.split("@")[0] },
    organizations: [
      {
        domainId: company,
        primary: true,
        orgUnits: u.units.map((orgUnitId, i) => ({ orgUnitId, primary: i === 0 })),
      },
    ],
  });

  /** One page: the cursor is the offset, opaque to the client. */
  function page<T>(items: T[], query: URLSearchParams) {
    const count = Math.min(100, Math.max(1, Number(query.get("count")) || 100));
    const cursor = query.get("cursor");
    const from = cursor ? Number(Buffer.from(cursor, "base64url").toString()) : 0;
    const next = from + count < items.length ? Buffer.from(String(from + count)).toString("base64url") : null;
    return { items: items.slice(from, from + count), responseMetaData: { nextCursor: next } };
  }

  async function handle(req: FakeRequest): Promise<FakeResponse | null> {
    const url = new URL(req.path, "http://fake");
    const one = /^\/v1\.0\/users\/([^/]+)$/.exec(url.pathname);
    if (req.method !== "GET" || !(url.pathname === "/v1.0/orgunits" || url.pathname === "/v1.0/users" || one))
      return null;
    if (held) await held;
    if (rateLimit) {
      const now = Date.now();
      if (now - lastServed < 1000 / rateLimit.rps) {
        calls.limited++;
        return {
          status: 429,
          headers: { "retry-after": String(rateLimit.retryAfterSeconds) },
          body: { code: "TOO_MANY_REQUESTS", description: "rate limit exceeded" },
        };
      }
      lastServed = now;
    }
    const domain = url.searchParams.get("domainId") ?? "";
    const company = companies.get(domain);
    if (!company) return { status: 404, body: { code: "NOT_FOUND", description: `no domain ${domain}` } };
    if (one) {
      calls.user++;
      const user = company.users.find((u) => u.userId === decodeURIComponent(one[1]));
      return user
        ? { status: 200, body: userView(domain, user) }
        : { status: 404, body: { code: "NOT_FOUND", description: "user not found" } };
    }
    if (url.pathname === "/v1.0/orgunits") {
      calls.orgunits++;
      const { items, responseMetaData } = page(company.units.map(unitView), url.searchParams);
      return { status: 200, body: { orgUnits: items, responseMetaData } };
    }
    calls.users++;
    const { items, responseMetaData } = page(
      company.users.map((u) => userView(domain, u)),
      url.searchParams,
    );
    return { status: 200, body: { users: items, responseMetaData } };
  }

  return {
    handle,
    calls,
    /** the company's directory (created empty on first use); change its arrays freely */
    company(id: string): FakeCompany {
      let c = companies.get(id);
      if (!c) companies.set(id, (c = { units: [], users: [] }));
      return c;
    },
    /** Holds every answer until the returned release is called (a suite that answers slowly). */
    hold(): () => void {
      let release!: () => void;
      held = new Promise((r) => (release = r));
      return () => {
        held = null;
        release();
      };
    },
    /** null: no limit; otherwise calls closer than 1/rps are answered 429 with this Retry-After */
    setRateLimit(limit: { rps: number; retryAfterSeconds?: number } | null) {
      rateLimit = limit ? { rps: limit.rps, retryAfterSeconds: limit.retryAfterSeconds ?? 1 } : null;
      lastServed = 0;
    },
  };
}
export type FakeDirectory = ReturnType<typeof fakeSuiteDirectory>;
