import type { Queryable } from "../store/db.js";
import type { Attachable, AttachmentConsumer } from "../apps/contract.js";
import type { Kernel } from "../kernel/kernel.js";
import { ownerKey, type Owner } from "../kernel/owner.js";
import type { SecretBox } from "../kernel/secrets.js";
import { ApiError } from "../http/errors.js";
import { connectionUrl } from "./provider/types.js";
import { normalizeCidr } from "./provider/local/index.js";
import { SEALED } from "./service-core.js";
import * as repo from "./repo.js";

/*
 * Apps attached to databases, the databases side (README: "Apps attached to a database"). The apps area asks
 * the "attachables" contribution's resolve when a pod names a database and answers through the capability
 * "attachments" which pods use one, rolls them after a rotation and names the networks they connect from.
 */

/** The apps side as the databases area reaches it. */
export interface AppsSide {
  readonly attachments: AttachmentConsumer;
}

/** Without an apps area nothing is attached. */
export const NO_APPS: AppsSide = {
  attachments: { attachedTo: async () => [], refresh: async () => [], sourceCidrs: async () => [] },
};

/** The apps side through the kernel, read at each call (the apps area registers later). */
export const appsSide = (kernel: Pick<Kernel, "use">): AppsSide => ({
  get attachments() {
    return kernel.use("attachments") ?? NO_APPS.attachments;
  },
});

/**
 * Sent by the apps area when an owner's app networks change (a network created or removed): `{ owner: { kind,
 * id } }`. Every instance of that owner with a non-empty allowlist gets its allowlist applied again, with the
 * networks as they are when that command runs. The reconciler catches up within a minute if a send is lost.
 */
export const OWNER_NETWORKS_JOB = "databases.owner-networks";

/**
 * Sent to the instance's host by a rotation that left the owner's app sessions alive: `{ databaseId, role, before }`
 * (ISO time). A rotation ends every session of the old password at once except direct ones from the owner's app
 * networks, so an attached app keeps answering on its held connection until its new replica (started with the
 * new password) serves; this job, `DB_APP_SESSION_GRACE_S` later, ends those that began before the change.
 */
export const END_OLD_SESSIONS_JOB = "databases.end-old-sessions";

/** What an attached app is given: the owner role's current password, kept sealed for this (migration 016). */
export function databaseAttachable(secrets: SecretBox): Attachable {
  return {
    resource: "databases",
    resolve: async (q, owner, ref) => {
      const row = await repo.findDatabase(q, owner, ref);
      if (!row || row.desired_state === "removed" || row.state === "removed" || row.port === null) return null;
      return { id: row.id, env: attachmentEnv(row, await currentPassword(q, row, secrets)) };
    },
  };
}

/**
 * DATABASE_URL and the libpq variables of the owner role. The host is the host-side address of the server (its
 * loopback address in local mode): the apps area rewrites it (in DATABASE_URL and PGHOST) to the address its
 * containers reach the host at, the gateway of their network; the servers listen on every address for that
 * (provider/local/settings.ts), pg_hba deciding who gets in. TLS is required, as for every client.
 */
export function attachmentEnv(row: repo.DatabaseRow, password: string): Record<string, string> {
  const host = row.host ?? "127.0.0.1";
  const port = row.port ?? 5432;
  const url = connectionUrl(
    { host, port, database: row.db_name, user: row.db_user, superuser: "postgres", sslmode: "require" },
    password,
  );
  return {
    DATABASE_URL: url,
    PGHOST: host,
    PGPORT: String(port),
    PGDATABASE: row.db_name,
    PGUSER: row.db_user,
    PGPASSWORD: password,
    PGSSLMODE: "require",
  };
}

/**
 * The owner role's password as the platform last set it. An instance created before migration 016 has none kept:
 * its initial password is still the current one while it is kept (not revealed yet) and was never rotated;
 * otherwise the owner rotates it once, which keeps it from then on.
 */
async function currentPassword(q: Queryable, row: repo.DatabaseRow, secrets: SecretBox): Promise<string> {
  if (row.app_password) return secrets.open(row.app_password, SEALED.appPassword);
  if (row.initial_password && !(await repo.wasRotated(q, row.id)))
    return secrets.open(row.initial_password, SEALED.password);
  throw new ApiError(
    "invalid_request",
    `The platform does not know the current password of database ${row.slug} (created before apps could attach); rotate it (POST /v1/databases/${row.id}/rotate-password), then attach it again.`,
  );
}

/**
 * What the servers' pg_hba admits besides the platform's own ranges. An empty allowlist admits every address; a
 * non-empty one its CIDRs plus the networks the owner's apps connect from ("the caller's own apps are always
 * allowed"), so an attached pod is never locked out by its owner's allowlist.
 */
export function effectiveAllowlist(allowlist: repo.DatabaseRow["allowlist"], appCidrs: string[]): string[] {
  return allowlist.length ? [...new Set([...allowlist.map((e) => e.cidr), ...appCidrs])] : [];
}

/** The owner's app networks as the apps area reports them, normalised and sorted; anything not a CIDR is left out. */
export async function appNetworks(q: Queryable, apps: AttachmentConsumer, owner: Owner): Promise<string[]> {
  const out = new Set<string>();
  for (const cidr of await apps.sourceCidrs(q, owner)) {
    try {
      out.add(normalizeCidr(cidr));
    } catch {
      // one malformed entry from the apps side must not keep the allowlist from being applied
    }
  }
  return [...out].sort();
}

/**
 * Instances whose pg_hba lists other app networks than their owner's apps use now (a lost owner-networks job,
 * a network created while the instance's allowlist command was already running): the reconciler re-applies
 * their allowlists. One apps-side lookup per owner; an owner whose lookup fails is skipped until the next pass.
 */
export async function driftedAllowlists(q: Queryable, apps: AppsSide): Promise<string[]> {
  const nets = new Map<string, string[] | null>();
  const out: string[] = [];
  for (const r of await repo.allowlistedIdle(q)) {
    const owner: Owner = { kind: r.owner_kind, id: r.owner_id };
    const key = ownerKey(owner);
    if (!nets.has(key)) nets.set(key, await appNetworks(q, apps.attachments, owner).catch(() => null));
    const now = nets.get(key);
    if (now && now.join(",") !== [...(r.app_cidrs ?? [])].sort().join(",")) out.push(r.id);
  }
  return out;
}
