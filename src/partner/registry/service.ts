/**
 * Managed registry namespaces (README.md in ../access): `<root>/<partner>/<child>/<app>` on the platform's own
 * registry, with short-lived push credentials for that one repository. The registry area names the child's
 * namespace (registry/namespace.ts) and admits its images for the child's deployments (kernel ImageAccess).
 */
import type { Db } from "../../store/db.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError, found } from "../../http/errors.js";
import type { PartnerRow } from "../repo.js";
import { findChild } from "../children/repo.js";
import { childOwner } from "../children/service.js";

export interface PartnerRegistryDeps {
  db: Db;
  kernel: Pick<Kernel, "use">;
}

export function registryService({ db, kernel }: PartnerRegistryDeps) {
  /** POST /v1/partner/users/{id}/registry: the app's repository and push (and pull) credentials for it alone. */
  async function create(p: Principal, partner: PartnerRow, childId: string, app: string) {
    const pushFor = kernel.use("imageAccess")?.pushFor;
    if (!pushFor) throw new ApiError("registry_unavailable", "This platform runs no image registry to push to.");
    return auditedTransaction(db, p, async (tx) => {
      const child = found(await findChild(tx, partner.account_id, childId), "child user");
      // the credentials are minted on the registry's own connection, after the child was found
      const c = await pushFor(childOwner(child.id), app);
      const repository = `${c.namespace}/${app}`;
      return {
        registry: c.registry,
        namespace: c.namespace,
        repository,
        image: `${c.registry}/${repository}`,
        username: c.username,
        password: c.password,
        expires_at: (c.expires_at ?? new Date()).toISOString(),
      };
    });
  }
  return { create };
}

export type PartnerRegistryService = ReturnType<typeof registryService>;
