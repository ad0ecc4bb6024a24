/**
 * Advisory locks of the control store, keyed by a string (`<what>:<id>`, hashed with hashtext). A transaction
 * lock holds until its transaction ends; a session lock holds on its connection until unlocked or closed.
 */
import type { ClientBase } from "pg";
import type { Queryable } from "./db.js";

/** a connection a session lock is held on (a pool's client, or a client of its own) */
type Session = Pick<ClientBase, "query">;

export async function xactLock(tx: Queryable, key: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [key]);
}

export async function sessionLock(c: Session, key: string): Promise<void> {
  await c.query("SELECT pg_advisory_lock(hashtext($1))", [key]);
}

export async function sessionUnlock(c: Session, key: string): Promise<void> {
  await c.query("SELECT pg_advisory_unlock(hashtext($1))", [key]);
}

/** Takes the session lock if it is free, without waiting; whether it was. */
export async function trySessionLock(c: Session, key: string): Promise<boolean> {
  return (await c.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [key])).rows[0].ok;
}
