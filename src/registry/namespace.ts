import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import * as repo from "./repo.js";

/**
 * The one place that decides an owner's registry namespace: `u-<id>` for an account, `o-<id>` for
 * an organization, `c-<id>` for a partner's child identity until partner registries
 * (`<root>/<partner>/<child>/<app>`, spec "Managed registry") give children their own layout. The id
 * part is the first 12 hex digits of the owner's id, longer when another owner already holds that
 * name; the first name given is stored and never changes, so pushed images keep their address.
 */
const PREFIX: Record<Owner["kind"], string> = { account: "u", org: "o", partner_child: "c" };
const LENGTHS = [12, 16, 20, 24, 32, 64];

export function namespaceCandidates(owner: Owner): string[] {
  const id = owner.id.toLowerCase().replace(/[^a-z0-9]/g, "");
  if (!id) throw new Error(`owner ${owner.kind}:${owner.id} has no usable id for a namespace`);
  const names = LENGTHS.map((n) => `${PREFIX[owner.kind]}-${id.slice(0, n)}`);
  return [...new Set(names)];
}

/** The owner's namespace, claimed at first use. */
export async function namespaceOf(q: Queryable, owner: Owner): Promise<string> {
  const known = await repo.namespaceOf(q, owner);
  if (known) return known;
  for (const candidate of namespaceCandidates(owner)) {
    if (await repo.claimNamespace(q, owner, candidate)) return candidate;
    // a concurrent first use by the same owner claimed one: that one counts
    const now = await repo.namespaceOf(q, owner);
    if (now) return now;
  }
  throw new Error(`no free registry namespace for ${owner.kind}:${owner.id}`);
}
