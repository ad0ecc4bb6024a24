import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { unwrap, type Database, type PlatformClient } from "@hosting-platform/sdk";
import { updateProfile } from "../config.js";
import { contextOf, type Context } from "../context.js";
import { EXIT, ExitError, UsageError } from "../exit.js";
import { details, green, spinner, table } from "../output.js";

const LIST_COLUMNS = ["id", "slug", "state", "size", "version", "host", "port"];
const DETAIL_KEYS = [
  "id",
  "name",
  "slug",
  "state",
  "status_reason",
  "size",
  "version",
  "storage_gb",
  "host",
  "port",
  "user",
  "database",
  "database_url",
  "public_host",
  "created_at",
];

const path_ = (id: string) => ({ params: { path: { id } } });

/** Shows progress on a terminal while an asynchronous operation runs, and its outcome. */
async function waitWithSpinner<T>(
  ctx: Context,
  label: string,
  run: (onStatus: (s: string) => void) => Promise<T>,
  done: string,
): Promise<T> {
  const spin = spinner(ctx.out, label);
  try {
    const result = await run((status) => spin.update(`${label} (${status})`));
    spin.stop(`${green(ctx.out.color, "✔")} ${done}`);
    return result;
  } catch (err) {
    spin.stop();
    throw err;
  }
}

/** Keeps the URL with the password the API showed once, so `db connect` can use it later. */
async function rememberCredentials(
  ctx: Context,
  db: { id: string; slug?: string | null; database_url?: string | null },
) {
  if (!db.database_url) return;
  await updateProfile(ctx.session.profileName, (p) => ({
    ...(p ?? { api_url: ctx.session.apiUrl }),
    databases: { ...p?.databases, [db.id]: { url: db.database_url!, slug: db.slug ?? null } },
  }));
}

function findOnPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** 202 {command_id} operations: wait for the command unless --no-wait. */
function commandAction(verb: "backup" | "stop" | "start", describe: string, doing: string) {
  return async (id: string, opts: { wait: boolean; label?: string; timeout: string }, cmd: Command) => {
    const ctx = await contextOf(cmd);
    const client = ctx.authed();
    const accepted =
      verb === "backup"
        ? await unwrap(
            client.api.POST("/v1/databases/{id}/backup", {
              ...path_(id),
              body: opts.label ? { label: opts.label } : {},
            }),
          )
        : verb === "stop"
          ? await unwrap(client.api.POST("/v1/databases/{id}/stop", path_(id)))
          : await unwrap(client.api.POST("/v1/databases/{id}/start", path_(id)));
    if (!opts.wait) return ctx.out.data(accepted, () => `${describe} accepted: command ${accepted.command_id}`);
    const db = await waitWithSpinner(
      ctx,
      `${doing} ${id}`,
      (onStatus) =>
        client.waitForCommand(id, accepted.command_id, {
          timeoutMs: Number(opts.timeout) * 1000,
          onPoll: (s) => onStatus(s.status),
        }),
      `${describe} done: ${id}`,
    );
    const command = (db.commands ?? []).find((c) => c.id === accepted.command_id);
    ctx.out.data({ command_id: accepted.command_id, status: command?.status ?? "succeeded", database: db }, () =>
      details(db as never, ["id", "slug", "state"], ctx.out.color),
    );
  };
}

export function dbCommands(program: Command): void {
  const db = program.command("db").description("Managed PostgreSQL databases");

  db.command("list", { isDefault: true })
    .description("List your databases")
    .action(async (_opts: unknown, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const list = await unwrap(ctx.authed().api.GET("/v1/databases"));
      ctx.out.data(list, () => table(list as never, LIST_COLUMNS, ctx.out.color));
    });

  db.command("get <id>")
    .description("Show one database (id or slug)")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const one = await unwrap(ctx.authed().api.GET("/v1/databases/{id}", path_(id)));
      ctx.out.data(one, () => details(one as never, DETAIL_KEYS, ctx.out.color));
    });

  db.command("create <name>")
    .description("Create a database and wait until it runs (passwords are shown once)")
    .option("--slug <slug>", "public name (default: the name)")
    .option("--size <size>", "dev, basic, pro or business")
    .option("--pg-version <version>", "PostgreSQL 16 or 17")
    .option("--storage-gb <gb>", "storage in GB")
    .option("--no-wait", "return at once, without waiting for it to run")
    .option("--timeout <seconds>", "how long to wait", "600")
    .action(
      async (
        name: string,
        opts: { slug?: string; size?: string; pgVersion?: string; storageGb?: string; wait: boolean; timeout: string },
        cmd: Command,
      ) => {
        const ctx = await contextOf(cmd);
        const client = ctx.authed();
        const body: Record<string, unknown> = { name };
        if (opts.slug) body.slug = opts.slug;
        if (opts.size) body.size = opts.size;
        if (opts.pgVersion) body.version = Number(opts.pgVersion);
        if (opts.storageGb) body.storage_gb = Number(opts.storageGb);
        const created = await unwrap(client.api.POST("/v1/databases", { body: body as never }));
        await rememberCredentials(ctx, created);
        let current: Database = created as Database;
        if (opts.wait && created.state !== "running") {
          current = await waitWithSpinner(
            ctx,
            `Creating ${created.slug ?? created.id}`,
            (onStatus) =>
              client.waitForDatabaseState(created.id, ["running"], {
                timeoutMs: Number(opts.timeout) * 1000,
                onPoll: (s) => onStatus(s.status),
              }),
            `Database ${created.slug ?? created.id} is running`,
          );
        }
        const result = { ...created, state: current.state, status_reason: current.status_reason };
        ctx.out.data(
          result,
          () =>
            `${details(result as never, [...DETAIL_KEYS, "password"], ctx.out.color)}\n\nThe password is shown once; \`platform db connect ${created.slug ?? created.id}\` uses the one stored in your profile.`,
        );
      },
    );

  db.command("delete <id>")
    .description("Delete a database (kept 7 days)")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const res = await unwrap(ctx.authed().api.DELETE("/v1/databases/{id}", path_(id)));
      ctx.out.data(res ?? { id, deleted: true }, () => `Deleted ${id} (recoverable for 7 days).`);
    });

  db.command("stop <id>")
    .description("Stop a dev database")
    .option("--no-wait", "do not wait for the command")
    .option("--timeout <seconds>", "how long to wait", "300")
    .action(commandAction("stop", "Stop", "Stopping"));
  db.command("start <id>")
    .description("Start a stopped database")
    .option("--no-wait", "do not wait for the command")
    .option("--timeout <seconds>", "how long to wait", "300")
    .action(commandAction("start", "Start", "Starting"));
  db.command("backup <id>")
    .description("Take a snapshot now")
    .option("--label <label>", "a label for the backup")
    .option("--no-wait", "do not wait for the command")
    .option("--timeout <seconds>", "how long to wait", "600")
    .action(commandAction("backup", "Backup", "Backing up"));

  db.command("rotate-password <id>")
    .description("Issue a new password (shown once; the old one stops working)")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const rotated = await unwrap(ctx.authed().api.POST("/v1/databases/{id}/rotate-password", path_(id)));
      await rememberCredentials(ctx, rotated);
      ctx.out.data(
        rotated,
        () =>
          `${details(rotated as never, ["id", "slug", "user", "password", "database_url"], ctx.out.color)}\n\nStored in your profile for \`platform db connect\`.`,
      );
    });

  db.command("connect <id>")
    .description(
      "Open psql on the database with the credentials stored at create or rotate-password; arguments after -- go to psql",
    )
    .argument("[psqlArgs...]", "passed to psql, e.g. -- -c 'select 1'")
    .option("--print-url", "print the connection URL instead of starting psql")
    .action(async (id: string, psqlArgs: string[], opts: { printUrl?: boolean }, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const found = await unwrap(ctx.authed().api.GET("/v1/databases/{id}", path_(id)));
      const stored = ctx.session.profile?.databases?.[found.id];
      if (!stored)
        throw new UsageError(
          `No password for ${found.slug ?? found.id} in profile "${ctx.session.profileName}": the API shows it once. Run \`platform db rotate-password ${id}\` to issue and store a new one.`,
        );
      if (opts.printUrl) return ctx.out.data({ url: stored.url }, () => stored.url);
      const psql = findOnPath("psql");
      if (!psql)
        throw new ExitError(
          `psql is not installed (Debian/Ubuntu: apt-get install postgresql-client). Connect with: platform db connect ${id} --print-url`,
          EXIT.notFound,
        );
      const code = await new Promise<number>((resolve, reject) => {
        const child = spawn(psql, [stored.url, ...psqlArgs], { stdio: "inherit" });
        child.on("error", reject);
        child.on("exit", (c, signal) => resolve(c ?? (signal ? 128 : 1)));
      });
      if (code !== 0) throw new ExitError(`psql exited with ${code}`, code);
    });
}

export type { PlatformClient };
