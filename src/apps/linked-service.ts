import type { Db } from "../store/db.js";
import { ApiError, found, notFound } from "../http/errors.js";
import { systemPrincipal, type AuditDraft, type Principal } from "../auth/principal.js";
import { accountOwner } from "../kernel/owner.js";
import { auditedTransaction } from "../audit/record.js";
import { liveAccountByEmail } from "../accounts/public.js";
import type { RuntimeProvider } from "../runtime/provider.js";
import * as repo from "./repo.js";
import type { PodsService } from "./service.js";
import type { PodInput } from "./types.js";

/**
 * Linked apps: a linked service (through the operator API) deploys a pod on behalf of an e-mail user. The pod
 * belongs to that user's account, which sees it read-only under /v1/linked-apps: logs, and a restart of a
 * running or failed app. It is not in GET /v1/pods (the user did not deploy it and cannot change it).
 */
export function linkedService(deps: { db: Db; pods: PodsService; runtime: RuntimeProvider }) {
  const { db, pods } = deps;

  /** the e-mail user's account acting as the owner, with the operator's request as the audit row */
  async function onBehalfOf(email: string, audit: AuditDraft): Promise<Principal> {
    const account = await liveAccountByEmail(db, email);
    if (!account) throw new ApiError("not_found", `No account with the e-mail ${email}.`);
    return systemPrincipal({
      accountId: account.id,
      owner: accountOwner(account.id),
      email: account.email,
      displayName: null,
      audit,
    });
  }

  async function deploy(input: { email: string; service: string; pod: PodInput }, audit: AuditDraft) {
    const p = await onBehalfOf(input.email, audit);
    return pods.create(p, input.pod, { linked: { email: p.account.email, service: input.service } });
  }

  const list = (p: Principal) => repo.listPods(db, p.owner, null, { linked: true });

  async function find(p: Principal, ref: string): Promise<repo.PodRow> {
    return found(await repo.findLinkedPod(db, p.owner, ref), "linked app");
  }

  const logs = async (p: Principal, ref: string, tail: number) => pods.logs(await find(p, ref), tail);

  /** only running or failed apps restart (spec); anything else is 409 */
  async function restart(p: Principal, ref: string): Promise<repo.PodRow> {
    const pod = await auditedTransaction(db, p, async (tx) => {
      const cur = await repo.findPod(tx, p.owner, ref, { forUpdate: true });
      if (!cur || cur.linked_email === null || cur.desired_state === "removed") throw notFound("linked app");
      if (cur.state !== "running" && cur.state !== "failed")
        throw new ApiError("invalid_state", `The app is ${cur.state}; only running or failed apps can be restarted.`);
      const next = await repo.setDesired(tx, cur.id, "running", { bump: true, reason: null });
      // a rollout like any restart: the legacy deployment endpoints and the reconciler's records name it
      await repo.recordRollout(tx, next, "restart");
      return next;
    });
    await pods.kick(pod);
    return pod;
  }

  return { deploy, list, logs, restart };
}

export type LinkedService = ReturnType<typeof linkedService>;
