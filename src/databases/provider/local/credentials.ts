import type pg from "pg";
import { isRunning } from "../../../pgserver/cluster.js";
import { ProviderError } from "../types.js";
import { ident, literal, withAdmin } from "./admin.js";
import type { InstanceContext } from "./context.js";
import { waitFor } from "./exec.js";
import type { NodeName } from "./layout.js";
import { endPooledSessions } from "./pooling.js";
import { CUSTOMER_SUPERUSER, saveSecrets } from "./record.js";
import { scramVerifier } from "./scram.js";

/** Customer roles and their passwords. */

const STANDBY_REPLAY_TIMEOUT_MS = 30_000;

/** Creates the role or brings its attributes and password to what is asked. */
export async function ensureRole(c: pg.Client, name: string, attrs: string, password: string): Promise<void> {
  const exists = (await c.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [name])).rowCount;
  if (!exists) await c.query(`CREATE ROLE ${ident(name)} WITH ${attrs}`);
  else await c.query(`ALTER ROLE ${ident(name)} WITH ${attrs}`);
  await setPassword(c, name, password);
}

/** The server stores the verifier we computed, so the plain password never reaches its logs. */
async function setPassword(c: pg.Client, name: string, password: string): Promise<string> {
  const verifier = scramVerifier(password) ?? password;
  await c.query(`ALTER ROLE ${ident(name)} WITH PASSWORD ${literal(verifier)}`);
  return verifier;
}

/** Ends the role's sessions, except those from `keepFrom` (CIDRs) and, with `startedBefore`, those begun since. */
async function terminateSessions(
  c: pg.Client,
  role: string,
  opts: { keepFrom?: string[]; startedBefore?: Date } = {},
): Promise<number> {
  const { rows } = await c.query<{ n: number }>(
    `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE usename = $1 AND pid <> pg_backend_pid()
        AND NOT coalesce(client_addr <<= ANY($2::inet[]), false)
        AND ($3::timestamptz IS NULL OR backend_start < $3)`,
    [role, opts.keepFrom ?? [], opts.startedBefore ?? null],
  );
  return rows[0].n;
}

/**
 * New password for the owner or the customer's superuser; its verifier is kept so a recovery re-applies
 * it. Every session that logged in with the old password ends — direct ones on both servers and pooled
 * ones in PgBouncer — before this returns; new logins with the new password work at once. Direct sessions
 * on the primary from `keepFrom` (the owner's app networks: apps being rolled onto the new password) are
 * left to `endSessionsBefore(changedAt)`, which the caller runs once they had time to roll.
 */
export async function rotatePassword(
  ctx: InstanceContext,
  role: "owner" | "superuser",
  newPassword: string,
  keepFrom: string[] = [],
): Promise<{ changedAt: Date }> {
  await ctx.requireRunning();
  const name = role === "owner" ? ctx.record.user : CUSTOMER_SUPERUSER;
  const { verifier, lsn, changedAt } = await ctx.withPrimary(async (c) => {
    const v = await setPassword(c, name, newPassword);
    // a session begun before this instant may have logged in with the old password; none after it can
    const at = (await c.query<{ at: Date }>("SELECT clock_timestamp() AS at")).rows[0].at;
    await terminateSessions(c, name, { keepFrom });
    return {
      verifier: v,
      changedAt: at,
      lsn: (await c.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn")).rows[0].lsn,
    };
  });
  ctx.secrets.roleVerifiers = { ...ctx.secrets.roleVerifiers, [name]: verifier };
  await saveSecrets(ctx.layout, ctx.secrets);
  if (ctx.record.pool) await endPooledSessions(ctx, name);
  const sb = ctx.standbyNode();
  if (sb && (await isRunning(ctx.cluster(sb)))) await endStandbySessions(ctx, sb, name, lsn);
  return { changedAt };
}

/** Ends the role's direct sessions on the primary that began before `startedBefore`; answers how many. */
export async function endSessionsBefore(
  ctx: InstanceContext,
  role: "owner" | "superuser",
  startedBefore: Date,
): Promise<number> {
  await ctx.requireRunning();
  const name = role === "owner" ? ctx.record.user : CUSTOMER_SUPERUSER;
  return ctx.withPrimary((c) => terminateSessions(c, name, { startedBefore }));
}

/**
 * The standby learns the new password by replaying it: sessions are ended once it has, since a login
 * there before would still be checked against the old one. A standby that does not confirm this in
 * time fails the rotation (a retry sets the password again); its sessions are ended all the same.
 */
async function endStandbySessions(ctx: InstanceContext, node: NodeName, role: string, lsn: string): Promise<void> {
  const replayed = await waitFor(
    async () => {
      const ok = await withAdmin(ctx.adminTarget(node), (c) =>
        c.query<{ ok: boolean | null }>("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok", [lsn]),
      ).then(
        (r) => r.rows[0].ok,
        () => null,
      );
      return ok ? true : undefined;
    },
    STANDBY_REPLAY_TIMEOUT_MS,
    () => new Error("timeout"),
    50,
  ).catch(() => false);
  await withAdmin(ctx.adminTarget(node), (c) => terminateSessions(c, role)).catch(() => {});
  if (!replayed) {
    throw new ProviderError(
      "standby_not_ready",
      `could not confirm within ${STANDBY_REPLAY_TIMEOUT_MS / 1000} s that the standby applied the new password of ${role}; it may still accept the old one`,
    );
  }
}
