/**
 * The partner's admission check (kernel.admit), for owners of kind partner_child: the child's monthly cap and the
 * partner's monthly limit on new paid creation (402), its department's deploy block (403) and the concurrent-run
 * limits of its department and every parent department (429 quota_exceeded). Running apps are never touched.
 */
import type { Queryable } from "../store/db.js";
import type { AdmissionCheck, AdmissionRequest } from "../kernel/contracts.js";
import type { Kernel } from "../kernel/kernel.js";
import { ApiError } from "../http/errors.js";
import { isPaid, prices } from "../billing/public.js";
import { findPartner } from "./repo.js";
import { childById, childIdsIn, childIdsOf } from "./children/repo.js";
import { listDepartments, lockDepartments } from "./departments/repo.js";
import { chainOf, subtreeOf } from "./departments/plan.js";
import { currentMonth, monthUsageKrw } from "./usage.js";

/** what the limits count: running pod instances (a standalone pod, each replica of a group) */
const RUNNING_KIND = "pod";

/** How many instances the request sets running: a pod creation, a group's member or growth 1; a start as it says. */
function startsOf(r: AdmissionRequest): number {
  if (r.kind !== RUNNING_KIND) return 0;
  if (r.starts !== undefined) return r.starts;
  if (r.update) return 0;
  // a pod group's own request (nothing recorded yet): its first replica must fit; each member is admitted again as it
  // is made, so a group whose replica_min does not fit stops at the limit with 429
  return 1;
}

type Deps = Pick<Kernel, "use" | "metering">;

async function running(q: Queryable, kernel: Deps, childIds: string[]): Promise<number> {
  const source = kernel.metering.find((s) => s.kind === RUNNING_KIND);
  if (!source) return 0;
  let n = 0;
  for (const id of childIds)
    n += (await source.billableOf(q, { kind: "partner_child", id })).filter((m) => m.state === "running").length;
  return n;
}

async function monthlyLimits(
  q: Queryable,
  kernel: Deps,
  r: AdmissionRequest,
  partnerId: string,
  capKrw: number | null,
) {
  if (r.update || !isPaid(prices(), r.kind, r.size, r.storageGb ?? 1)) return;
  const totals = kernel.use("usageTotals");
  if (capKrw !== null && totals) {
    const used = await totals.spentKrw(q, r.owner, currentMonth());
    if (used >= capKrw)
      throw new ApiError(
        "partner_child_monthly_limit",
        `This end user's monthly cap of ${capKrw} KRW is reached (${used} KRW used this month); running apps continue.`,
      );
  }
  const partner = await findPartner(q, partnerId);
  if (partner?.monthly_limit_krw != null) {
    const used = await monthUsageKrw(q, kernel, await childIdsOf(q, partnerId));
    if (used >= partner.monthly_limit_krw)
      throw new ApiError(
        "partner_monthly_limit",
        `The partner's monthly limit of ${partner.monthly_limit_krw} KRW is exceeded (${used} KRW used this month); running apps continue.`,
      );
  }
}

export function partnerAdmission(kernel: Deps): AdmissionCheck {
  return async (q, r) => {
    if (r.owner.kind !== "partner_child") return;
    const child = await childById(q, r.owner.id);
    if (!child) return;
    await monthlyLimits(q, kernel, r, child.partner_id, child.monthly_cap_krw);
    if (!child.department_code) return;
    const all = await listDepartments(q, child.partner_id);
    const chain = chainOf(all, child.department_code);
    // growth of a running app and a group's replicas were judged with the app's own request
    const blocked = !r.growth && !r.partOf && chain.find((d) => d.deploy_blocked);
    if (blocked)
      throw new ApiError(
        "department_deploy_blocked",
        `Department ${blocked.code} has deploy_blocked set${blocked.code === chain[0].code ? "" : `, inherited by ${chain[0].code}`}: new deployments are stopped; running apps continue.`,
      );
    const starts = startsOf(r);
    const limited = chain.filter((d) => d.max_running !== null);
    if (!starts || !limited.length) return;
    // two starts racing for the last slot: the locks (root first) serialize them until the admitting transaction ends,
    // and the second counts the first's instance once it committed
    await lockDepartments(q, child.partner_id, limited.map((d) => d.code).reverse());
    for (const d of limited) {
      const now = await running(q, kernel, await childIdsIn(q, child.partner_id, subtreeOf(all, d.code)));
      if (now + starts > d.max_running!)
        throw new ApiError(
          "quota_exceeded",
          `Department ${d.code} allows ${d.max_running} running app instances (sub-departments included) and ${now} run now; stop one first.`,
        );
    }
  };
}
