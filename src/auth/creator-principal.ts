import type { OwnerColumns } from "../kernel/owned-repo.js";
import { systemPrincipal, type AuditDraft, type Principal } from "./principal.js";

/**
 * The platform acting on an owned row on its own (the autoscaler on a group, previews on a link): as the account
 * responsible for the row, for the row's owner, under the name `displayName`, with the audit row of the change
 * (written by the change's transaction).
 */
export function creatorPrincipal(
  row: Pick<OwnerColumns, "owner_kind" | "owner_id" | "account_id">,
  displayName: string,
  audit: Omit<AuditDraft, "written">,
): Principal {
  return systemPrincipal({
    accountId: row.account_id,
    owner: { kind: row.owner_kind, id: row.owner_id },
    email: "",
    displayName,
    audit: { ...audit, written: false },
  });
}
