import type { SuiteDirectory, SuiteMember, SuiteUnit } from "../provider.js";
import { SuiteApiError, type SuiteApiClient } from "./api-client.js";

/**
 * The NAVER WORKS-style directory (README.md of src/suite, "The suite's API shape"): org units and users of one
 * company (`domainId`), in cursor pages of `count`; the API client spaces the calls to SUITE_API_RPS and waits out
 * a 429's Retry-After.
 */

/** The page size asked for: the API's largest. */
export const DIRECTORY_PAGE = 100;
/** A guard against a suite that keeps answering a cursor: no company has this many pages. */
const MAX_PAGES = 10_000;

interface Page {
  responseMetaData?: { nextCursor?: string | null } | null;
}
interface WorksOrgUnit {
  orgUnitId: string;
  orgUnitName: string;
  parentOrgUnitId?: string | null;
}
interface WorksUser {
  userId: string;
  email?: string | null;
  userName?: { lastName?: string | null; firstName?: string | null } | null;
  organizations?: {
    domainId?: string | number;
    primary?: boolean;
    orgUnits?: { orgUnitId: string; primary?: boolean }[];
  }[];
}

const malformed = (what: string) => new SuiteApiError(502, `the suite's ${what} answer is not in the documented shape`);

function unitOf(u: WorksOrgUnit): SuiteUnit {
  if (typeof u?.orgUnitId !== "string" || !u.orgUnitId) throw malformed("orgunits");
  return { id: u.orgUnitId, name: String(u.orgUnitName ?? u.orgUnitId), parentId: u.parentOrgUnitId || null };
}

/** The user's units in this company, the primary unit of the primary organization first. */
function memberOf(u: WorksUser, companyId: string): SuiteMember {
  if (typeof u?.userId !== "string" || !u.userId) throw malformed("users");
  const orgs = (u.organizations ?? []).filter((o) => o.domainId === undefined || String(o.domainId) === companyId);
  orgs.sort((a, b) => Number(!!b.primary) - Number(!!a.primary));
  const units: string[] = [];
  for (const o of orgs) {
    const sorted = [...(o.orgUnits ?? [])].sort((a, b) => Number(!!b.primary) - Number(!!a.primary));
    for (const unit of sorted) if (unit?.orgUnitId && !units.includes(unit.orgUnitId)) units.push(unit.orgUnitId);
  }
  const name = [u.userName?.lastName, u.userName?.firstName].filter(Boolean).join(" ").trim();
  return { userId: u.userId, email: u.email ?? null, name: name || null, unitIds: units };
}

export function worksDirectory(api: SuiteApiClient): SuiteDirectory {
  /** Every page of a list; the cursor is opaque, passed back as it came. */
  async function all<T>(path: string, companyId: string, key: string): Promise<T[]> {
    const out: T[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < MAX_PAGES; pages++) {
      const query = new URLSearchParams({ domainId: companyId, count: String(DIRECTORY_PAGE) });
      if (cursor) query.set("cursor", cursor);
      const page = await api.call<Page & Record<string, unknown>>("GET", `${path}?${query}`);
      const items = page?.[key];
      if (!Array.isArray(items)) throw malformed(path);
      out.push(...(items as T[]));
      cursor = page.responseMetaData?.nextCursor || null;
      if (!cursor) return out;
    }
    throw new SuiteApiError(502, `the suite's ${path} gave more than ${MAX_PAGES} pages`);
  }

  return {
    async units(companyId) {
      return (await all<WorksOrgUnit>("/v1.0/orgunits", companyId, "orgUnits")).map(unitOf);
    },
    async members(companyId) {
      return (await all<WorksUser>("/v1.0/users", companyId, "users")).map((u) => memberOf(u, companyId));
    },
    async member(companyId, userId) {
      const query = new URLSearchParams({ domainId: companyId });
      try {
        const user = await api.call<WorksUser>("GET", `/v1.0/users/${encodeURIComponent(userId)}?${query}`);
        return memberOf(user, companyId);
      } catch (err) {
        if (err instanceof SuiteApiError && err.status === 404) return null;
        throw err;
      }
    },
  };
}
