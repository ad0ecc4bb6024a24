import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { childOf } from "../partner/public.js";
import * as repo from "./repo.js";

/**
 * The one place that decides an owner's registry namespace: `u-<id>` for an account, `o-<id>` for
 * an organization, `partners/<partner>/<child>` for a partner's child identity (spec "Managed registry":
 * `<root>/<partner>/<child>/<app>`, the app being a repository under it; `c-<id>` when its partner is unknown).
 * Each id part is the first 12 hex digits of the id, longer when another owner already holds that
 * name; the first name given is stored and never changes, so pushed images keep their address.
 */
const PREFIX: Record<Owner["kind"], string> = { account: "u", org: "o", partner_child: "c" };
const LENGTHS = [12, 16, 20, 24, 32, 64];

/** the root of partners' managed namespaces (`<root>/<partner>/<child>`) */
export const PARTNER_ROOT = "partners";

const idPart = (o: { kind: string; id: string }) => {
  const id = o.id.toLowerCase().replace(/[^a-z0-9]/g, "");
  if (!id) throw new Error(`owner ${o.kind}:${o.id} has no usable id for a namespace`);
  return id;
};

export function namespaceCandidates(owner: Owner, partnerId?: string): string[] {
  const id = idPart(owner);
  const partner = partnerId === undefined ? null : idPart({ kind: "partner", id: partnerId });
  const names = LENGTHS.map((n) =>
    partner ? `${PARTNER_ROOT}/${partner.slice(0, n)}/${id.slice(0, n)}` : `${PREFIX[owner.kind]}-${id.slice(0, n)}`,
  );
  return [...new Set(names)];
}

/** The owner's namespace, claimed at first use. */
export async function namespaceOf(q: Queryable, owner: Owner): Promise<string> {
  const known = await repo.namespaceOf(q, owner);
  if (known) return known;
  const partnerId = (await childOf(q, owner))?.partner.account_id;
  for (const candidate of namespaceCandidates(owner, partnerId)) {
    if (await repo.claimNamespace(q, owner, candidate)) return candidate;
    // a concurrent first use by the same owner claimed one: that one counts
    const now = await repo.namespaceOf(q, owner);
    if (now) return now;
  }
  throw new Error(`no free registry namespace for ${owner.kind}:${owner.id}`);
}
