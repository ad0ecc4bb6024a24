import type pg from "pg";
import { isRunning } from "../../../pgserver/cluster.js";
import { ident, literal, withAdmin } from "./admin.js";
import type { InstanceContext } from "./context.js";
import { refreshPool } from "./pooling.js";
import { CUSTOMER_SUPERUSER, saveSecrets } from "./record.js";
import { scramVerifier } from "./scram.js";

/** Customer roles and their passwords. */

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

async function terminateSessions(c: pg.Client, role: string): Promise<void> {
  await c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1 AND pid <> pg_backend_pid()", [role]);
}

/** New password for the owner or the customer's superuser; its verifier is kept so a recovery re-applies it. */
export async function rotatePassword(ctx: InstanceContext, role: "owner" | "superuser", newPassword: string): Promise<void> {
  await ctx.requireRunning();
  const name = role === "owner" ? ctx.record.user : CUSTOMER_SUPERUSER;
  const verifier = await ctx.withPrimary(async (c) => {
    const v = await setPassword(c, name, newPassword);
    await terminateSessions(c, name);
    return v;
  });
  ctx.secrets.roleVerifiers = { ...ctx.secrets.roleVerifiers, [name]: verifier };
  await saveSecrets(ctx.layout, ctx.secrets);
  const sb = ctx.standbyNode();
  if (sb && (await isRunning(ctx.cluster(sb)))) {
    await withAdmin(ctx.adminTarget(sb), (c) => terminateSessions(c, name)).catch(() => {});
  }
  if (ctx.record.pool) await refreshPool(ctx);
}
