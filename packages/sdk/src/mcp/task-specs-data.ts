/** Task tools of the account, billing, databases, organizations and docs. */
import { s, type TaskSpec } from "./tasks.js";

const DB_REF = s.str("the database's id or slug");

/** Statements that change the schema or rights: run_sql asks for confirmation before them. */
const DDL = /\b(create|alter|drop|truncate|grant|revoke|comment\s+on|reindex|cluster|vacuum)\b/i;
/** The SQL without quoted text and comments, so a keyword inside a string literal is not taken for DDL. */
const code = (sql: string) =>
  sql
    .replace(/--[^\n]*/g, " ")
    .replace(/\/\*[\s\S]*?\*\//g, " ")
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/\$([A-Za-z_]*)\$[\s\S]*?\$\1\$/g, "''");
export const isDdl = (sql: string): boolean => DDL.test(code(sql));

/** The manual's sections: it is plain text whose headings are lines in capitals or starting with '#'. */
function sections(manual: string): { title: string; text: string }[] {
  const out: { title: string; text: string }[] = [];
  let current = { title: "introduction", lines: [] as string[] };
  for (const line of manual.split("\n")) {
    const heading = /^#{1,3} /.test(line) || (/^[A-Z][A-Z0-9 ,/&()-]{3,}$/.test(line.trim()) && line.trim() === line);
    if (heading && current.lines.some((l) => l.trim())) {
      out.push({ title: current.title, text: current.lines.join("\n").trim() });
      current = { title: line.replace(/^#+ /, "").trim(), lines: [] };
    } else if (heading) current.title = line.replace(/^#+ /, "").trim();
    else current.lines.push(line);
  }
  out.push({ title: current.title, text: current.lines.join("\n").trim() });
  return out.filter((x) => x.text);
}

export function searchManual(manual: string, query: string, limit = 5): { title: string; text: string }[] {
  const terms = query
    .toLowerCase()
    .split(/[^a-z0-9_/.-]+/)
    .filter((t) => t.length > 1);
  const scored = sections(manual).map((sec) => {
    const hay = `${sec.title}\n${sec.text}`.toLowerCase();
    const score = terms.reduce(
      (n, t) => n + (hay.split(t).length - 1) + (sec.title.toLowerCase().includes(t) ? 5 : 0),
      0,
    );
    return { ...sec, score };
  });
  return scored
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map(({ title, text }) => ({ title, text: text.length > 2000 ? `${text.slice(0, 2000)}\n[...]` : text }));
}

export const dataTasks: TaskSpec[] = [
  {
    name: "whoami",
    group: "account",
    description: "Who the key belongs to: account id, key kind and scopes (and the account's e-mail for full tokens).",
    input: {},
    calls: ["getToken", "getMe"],
    async run(ctx) {
      const token = await ctx.call("getToken");
      const me = token.kind === "full" ? await ctx.call("getMe").catch(() => null) : null;
      return { ...token, ...(me ? { email: me.email, display_name: me.display_name } : {}) };
    },
  },
  {
    name: "billing_balance",
    group: "account",
    description: "Credit balance in KRW, the current burn rate per hour and the hours it lasts.",
    input: {},
    calls: ["getBillingBalance"],
    run: (ctx) => ctx.call("getBillingBalance"),
  },
  {
    name: "billing_usage",
    group: "account",
    description: "Charges per day and resource kind over a date range (default: the last 30 days).",
    input: { from: ["getUsageDaily", "from"], to: ["getUsageDaily", "to"] },
    calls: ["getUsageDaily"],
    run: (ctx, a) => ctx.call("getUsageDaily", a),
  },
  {
    name: "org_overview",
    group: "org",
    description: "The caller's organization: its settings, members and resources (read-only).",
    input: {},
    calls: ["getOrg", "listOrgMembers", "listOrgResources"],
    async run(ctx) {
      const org = await ctx.call("getOrg");
      const [members, resources] = await Promise.all([
        ctx.call("listOrgMembers").catch((e: Error) => ({ unavailable: e.message })),
        ctx.call("listOrgResources").catch((e: Error) => ({ unavailable: e.message })),
      ]);
      return { org, members, resources };
    },
  },
  {
    name: "docs_search",
    group: "docs",
    description: "Search the platform's manual; answers the best matching sections. Use it before guessing an API.",
    input: { query: s.str("words to look for, e.g. 'attach database to pod'", { maxLength: 200 }) },
    required: ["query"],
    calls: ["getManual"],
    async run(ctx, a) {
      const manual = String(await ctx.call("getManual"));
      const hits = searchManual(manual, String(a.query));
      return hits.length ? hits : "No section matched; read the resource platform://manual.";
    },
  },
  {
    name: "list_databases",
    group: "databases",
    description: "The caller's PostgreSQL databases with state, size and host.",
    input: {},
    calls: ["listDatabases"],
    async run(ctx) {
      const list = await ctx.call("listDatabases");
      const items: any[] = Array.isArray(list) ? list : (list.items ?? []);
      return items.map((d) => ({ id: d.id, slug: d.slug, name: d.name, state: d.state, size: d.size, host: d.host }));
    },
  },
  {
    name: "get_database",
    group: "databases",
    description: "One database in full: state, size, storage, backups, recent commands.",
    input: { id: DB_REF },
    required: ["id"],
    calls: ["getDatabase"],
    run: (ctx, a) => ctx.call("getDatabase", { id: a.id }),
  },
  {
    name: "create_database",
    group: "databases",
    description:
      "Create a PostgreSQL database. Size 'dev' is free; paid sizes answer first with the price and a confirmation token. The password is shown once.",
    input: {
      name: ["createDatabase", "name"],
      size: ["createDatabase", "size"],
      version: ["createDatabase", "version"],
      storage_gb: ["createDatabase", "storage_gb"],
    },
    required: ["name"],
    calls: ["createDatabase"],
    billable: (a) => ({ kind: "database", size: a.size ?? "dev", storageGb: a.storage_gb }),
    run: (ctx, a) => ctx.call("createDatabase", a),
  },
  {
    name: "delete_database",
    group: "databases",
    description: "Delete a database (kept restorable for 7 days, then gone). Ask the person first.",
    input: { id: DB_REF },
    required: ["id"],
    calls: ["deleteDatabase"],
    run: (ctx, a) => ctx.call("deleteDatabase", { id: a.id }),
  },
  {
    name: "get_connection_string",
    group: "databases",
    description:
      "How to connect: host, port, database, user and the URL (the password is shown only at create or rotate).",
    input: { id: DB_REF },
    required: ["id"],
    calls: ["getDatabase"],
    async run(ctx, a) {
      const d = await ctx.call("getDatabase", { id: a.id });
      const pick = ["host", "public_host", "internal_host", "port", "database", "user", "database_url"];
      return {
        ...Object.fromEntries(pick.map((k) => [k, d[k]])),
        database_url_public: d.database_url_public,
        note: "Apps attached to the database get DATABASE_URL with the password; rotate_database_password shows a new one.",
      };
    },
  },
  {
    name: "run_sql",
    group: "databases",
    description:
      "Run SQL on a database. Read-only unless write is true; schema changes (DDL) need confirmation. At most 500 rows, 10 s.",
    input: {
      id: DB_REF,
      sql: s.str("the SQL (one or more statements; the last one's rows are answered)", { maxLength: 100_000 }),
      write: s.bool("allow changes (INSERT, UPDATE, DDL...); default false: a read-only transaction"),
    },
    required: ["id", "sql"],
    calls: ["mcpRunSql", "mcpRunSqlWrite"],
    destructive: true,
    confirmation: (a) =>
      a.write === true && isDdl(String(a.sql))
        ? "This SQL changes the schema or rights (DDL); the person should agree to it."
        : null,
    readOnlyVariant: {
      drop: ["write", "confirm"],
      calls: ["mcpRunSql"],
      description: "Run read-only SQL on a database (a READ ONLY transaction). At most 500 rows, 10 s.",
    },
    async run(ctx, a) {
      const write = a.write === true && !ctx.readOnly;
      const answer = await ctx.call(write ? "mcpRunSqlWrite" : "mcpRunSql", { id: a.id, sql: a.sql });
      const { rows, ...meta } = answer;
      return `${JSON.stringify(meta)}\n${ctx.untrusted("the query's rows (JSON)", JSON.stringify(rows, null, 1))}`;
    },
  },
  {
    name: "list_backups",
    group: "databases",
    description: "Backups of one database (or of all), newest first.",
    input: { id: s.str("the database's id (leave out for every database)") },
    calls: ["listBackups"],
    async run(ctx, a) {
      const list = await ctx.call("listBackups");
      const items: any[] = Array.isArray(list) ? list : (list.items ?? []);
      return a.id ? items.filter((b) => b.database_id === a.id) : items;
    },
  },
  {
    name: "backup_database",
    group: "databases",
    description: "Take a snapshot backup now; answers the command id.",
    input: { id: DB_REF, label: ["backupDatabase", "label"] },
    required: ["id"],
    calls: ["backupDatabase"],
    run: (ctx, a) => ctx.call("backupDatabase", a),
  },
  {
    name: "restore_database",
    group: "databases",
    description: "Restore a database to a point in time (overwrites its current data). Ask the person first.",
    input: { id: DB_REF, target_time: ["restoreDatabase", "target_time"] },
    required: ["id", "target_time"],
    calls: ["restoreDatabase"],
    destructive: true,
    run: (ctx, a) => ctx.call("restoreDatabase", a),
  },
  {
    name: "rotate_database_password",
    group: "databases",
    description: "Set a new password for the owner role (shown once); old sessions end, attached apps restart.",
    input: { id: DB_REF },
    required: ["id"],
    calls: ["rotateDatabasePassword"],
    destructive: true,
    run: (ctx, a) => ctx.call("rotateDatabasePassword", { id: a.id }),
  },
];
