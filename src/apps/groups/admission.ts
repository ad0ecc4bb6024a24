import type { AdmissionRequest } from "../../kernel/area.js";
import { POD_KIND } from "../sizes.js";
import type { GroupRow } from "./repo.js";

/**
 * What admission judges when a group brings members up on its own (the autoscaler's growth, a wake from idleness):
 * pods of the group's size, for its owner and the account that created it; `judged` says what else applies.
 */
export function groupAdmission(
  g: GroupRow,
  judged: Omit<AdmissionRequest, "owner" | "accountId" | "kind" | "size">,
): AdmissionRequest {
  return {
    owner: { kind: g.owner_kind, id: g.owner_id },
    accountId: g.account_id,
    kind: POD_KIND,
    size: g.spec.size,
    ...judged,
  };
}
