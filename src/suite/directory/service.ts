import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { Db, Queryable } from "../../store/db.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { TokenResolver } from "../../auth/token-resolver.js";
import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError } from "../../http/errors.js";
import { findOrg, removeFromOrg, withdrawInvitesTo, type OrgRow } from "../../orgs/public.js";
import { revokeEveryToken } from "../../accounts/public.js";
import type { SuiteMember, SuiteProvider, SuiteUnit } from "../provider.js";
import { suiteUnavailable } from "../adapter/api-client.js";
import { requireSuite, type SuiteState } from "../state.js";
import { countResults, DEPARTMENT_RESULTS, planMirror, type DepartmentItem } from "./plan.js";
import { insidePolicy } from "./public.js";
import * as repo from "./repo.js";
import * as orgs from "../../orgs/public.js";

export interface DirectoryDeps {
  db: Db;
  kernel: Kernel;
  log: FastifyBaseLogger;
  suite: SuiteState;
  /** the API's token resolver once routes are registered (its cache forgets revoked tokens at once) */
  tokens: () => TokenResolver;
}

export const MEMBER_RESULTS = ["update", "skip", "delete"] as const;

/** A suite member of the organization after a sync: their department set, left as it was, or deprovisioned. */
export interface MemberItem {
  account_id: string;
  email: string;
  result: (typeof MEMBER_RESULTS)[number];
  /** the department after the sync (code), null: none */
  department_code: string | null;
  /** delete (and the owner's skip): the suite no longer lists them, or they are outside the join policy */
  reason?: "unlisted" | "outside_policy";
  message?: string;
}

export interface SyncAnswer {
  items: DepartmentItem[];
  counts: Record<(typeof DEPARTMENT_RESULTS)[number], number>;
  members: MemberItem[];
  member_counts: Record<(typeof MEMBER_RESULTS)[number], number>;
}

const OWNER_KEPT =
  "The owner is never deprovisioned by a sync; transfer the ownership or fix the suite's directory or the join policy.";

/**
 * The suite's directory mirrored into the organization (README.md of src/suite, "Directory"): departments from the
 * linked company's chart (matched on the unit id; removed units tombstoned), each suite member's department from
 * their primary unit, and deprovisioning of staff the suite no longer lists or the join policy no longer admits.
 * The suite is read first (slow, rate-limited), then everything is written in one transaction under the chart lock.
 */
export function directoryService(d: DirectoryDeps) {
  const { db } = d;

  async function read(
    provider: SuiteProvider,
    companyId: string,
  ): Promise<{ units: SuiteUnit[]; people: SuiteMember[] }> {
    try {
      const units = await provider.directory.units(companyId);
      const people = await provider.directory.members(companyId);
      return { units, people };
    } catch (err) {
      throw suiteUnavailable(err);
    }
  }

  /** Departments, members' departments and deprovisioning, in the caller's transaction. */
  async function apply(
    tx: Queryable,
    link: repo.LinkRow,
    units: SuiteUnit[],
    people: SuiteMember[],
  ): Promise<SyncAnswer> {
    await orgs.lockChart(tx, link.org_id);
    const org = await findOrg(tx, link.org_id, true);
    if (!org) throw new ApiError("not_found", "The organization no longer exists.");

    const plan = planMirror(await orgs.mirrorRows(tx, link.org_id), units, randomUUID);
    // a released unit id is free before a department takes it; parents exist before children point at them
    await orgs.releaseDepartmentUnits(tx, link.org_id, plan.releases);
    await orgs.insertMirrored(tx, link.org_id, plan.inserts);
    await orgs.updateMirrored(tx, link.org_id, plan.updates);
    await orgs.tombstoneDepartments(tx, link.org_id, plan.tombstones);
    const codeOf = new Map([...plan.items].reverse().map((i) => [plan.departments.get(i.suite_unit_id), i.code]));

    const listed = new Map(people.map((m) => [m.userId, m]));
    const policy = { joinPolicy: link.join_policy, joinUnits: link.join_units };
    const members: MemberItem[] = [];
    const moves: { accountId: string; departmentId: string | null }[] = [];
    for (const who of await repo.liveIdentities(tx, link)) {
      const person = listed.get(who.subject);
      const outside = !person
        ? "unlisted"
        : who.role !== null && !insidePolicy(policy, units, person.unitIds, { invited: true }).inside
          ? "outside_policy"
          : null;
      if (outside && who.role === "owner") {
        members.push({ ...itemOf(who, "skip", who.department_code), reason: outside, message: OWNER_KEPT });
        d.log.warn({ orgId: link.org_id, accountId: who.account_id, reason: outside }, "suite owner not deprovisioned");
        continue;
      }
      if (outside) {
        await deprovision(tx, org, who);
        members.push({ ...itemOf(who, "delete", null), reason: outside });
        continue;
      }
      // a suite identity that is not (or no longer) a member: nothing to mirror
      if (!person || who.role === null) continue;
      // the primary unit's department; a member of no mirrored unit has none
      const primary = person.unitIds.find((u) => plan.departments.has(u));
      const department = primary ? plan.departments.get(primary)! : null;
      if (department === who.department_id) members.push(itemOf(who, "skip", who.department_code));
      else {
        moves.push({ accountId: who.account_id, departmentId: department });
        members.push(itemOf(who, "update", department ? (codeOf.get(department) ?? null) : null));
      }
    }
    await orgs.setMemberDepartments(tx, link.org_id, moves);
    return {
      items: plan.items,
      counts: countResults(plan.items, DEPARTMENT_RESULTS),
      members,
      member_counts: countResults(members, MEMBER_RESULTS),
    };
  }

  const itemOf = (who: repo.IdentityRow, result: MemberItem["result"], code: string | null): MemberItem => ({
    account_id: who.account_id,
    email: who.email,
    result,
    department_code: code,
  });

  /**
   * The person loses every session and token, leaves the organization as a removed member does (company assets
   * to the owner), and their pending invitations are withdrawn, so an old one cannot bring them back.
   */
  async function deprovision(tx: Queryable, org: OrgRow, who: repo.IdentityRow) {
    const tokens = d.tokens();
    await revokeEveryToken(tx, tokens, who.account_id);
    await repo.markDeprovisioned(tx, who.account_id);
    if (who.role !== null) await removeFromOrg(tx, { kernel: d.kernel, tokens }, org, who.account_id);
    await withdrawInvitesTo(tx, org.id, [who.email]);
  }

  /** One organization, now: 404 outside a suite-linked organization, 503 when the suite does not answer. */
  async function sync(orgId: string, principal: Principal | null): Promise<SyncAnswer> {
    const link = await repo.linkOf(db, orgId);
    if (!link) throw new ApiError("not_found", "This organization is not linked to a suite company.");
    const provider = requireSuite(d.suite);
    const startedAt = new Date();
    try {
      const { units, people } = await read(provider, link.company_id);
      return await auditedTransaction(db, principal, async (tx) => {
        const answer = await apply(tx, link, units, people);
        await repo.markSynced(tx, orgId, startedAt);
        return answer;
      });
    } catch (err) {
      await repo.markFailed(db, orgId, (err as Error).message).catch(() => {});
      throw err;
    }
  }

  return {
    sync,
    /**
     * A login's sync job: the sync, unless one that began after the last request already ran. A burst of logins
     * queues one job running and one waiting (the singleton key); the waiting one then finds its request covered
     * and reads nothing (a CI run under load counted 3 directory reads for one burst).
     */
    async syncRequested(orgId: string): Promise<void> {
      if (await repo.syncOwed(db, orgId)) await sync(orgId, null);
    },
    /** The periodic sweep: every organization whose sync was asked for or is older than SUITE_SYNC_MINUTES. */
    async sweep(): Promise<{ synced: number; failed: number }> {
      if (!d.suite.provider) return { synced: 0, failed: 0 };
      let synced = 0;
      let failed = 0;
      for (const orgId of await repo.dueOrgs(db, d.suite.config.syncMinutes)) {
        try {
          await sync(orgId, null);
          synced++;
        } catch (err) {
          failed++;
          d.log.warn({ err, orgId }, "suite directory sync failed; the next sweep retries");
        }
      }
      return { synced, failed };
    },
  };
}

export type DirectoryService = ReturnType<typeof directoryService>;
