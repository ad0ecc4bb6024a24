import type { Command } from "commander";
import {
  buildRequest,
  coerceValue,
  indexOperations,
  type OpenApiDocument,
  type OperationIndex,
} from "@hosting-platform/sdk";
import { contextOf, type Context } from "../context.js";
import { UsageError } from "../exit.js";
import { table } from "../output.js";

/** The server's own document, so an endpoint added there is callable here with no CLI release. */
export async function loadOperations(ctx: Context): Promise<OperationIndex> {
  const doc = (await ctx.client.request("GET", "/v1/openapi.json")) as OpenApiDocument;
  return indexOperations(doc);
}

/** --name value, --name=value, --flag (true), --storage-gb (snake_case in the schema), --data '<json object>'. */
export function parseFields(
  args: string[],
  properties: Record<string, Record<string, unknown>>,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--")) throw new UsageError(`unexpected argument "${arg}": fields are given as --name value`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    let value = inline;
    if (value === undefined && i + 1 < args.length && !args[i + 1].startsWith("--")) value = args[++i];
    if (name === "data") {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value ?? "");
      } catch {
        throw new UsageError("--data takes a JSON object");
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
        throw new UsageError("--data takes a JSON object");
      Object.assign(input, parsed);
      continue;
    }
    const key = name in properties ? name : name.replace(/-/g, "_");
    if (!(key in properties))
      throw new UsageError(
        `unknown field --${name}; this operation takes: ${
          Object.keys(properties)
            .map((p) => `--${p}`)
            .join(" ") || "no fields"
        }`,
      );
    input[key] = coerceValue(properties[key], value ?? "");
  }
  return input;
}

/** The program's own options (--json, --profile x, --api-url x) are not fields of the operation. */
function withoutGlobalOptions(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--json" || a === "--org" || a.startsWith("--profile=") || a.startsWith("--api-url=")) continue;
    if (a === "--profile" || a === "--api-url") {
      i++;
      continue;
    }
    out.push(a);
  }
  return out;
}

export function apiCommand(program: Command): void {
  program
    .command("api")
    .description(
      "Call any API operation by its operationId: platform api createDatabase --name my-db (platform api --list)",
    )
    .argument("[operationId]", "e.g. listDatabases, createDatabase, getBillingBalance")
    .option("--list", "list the operations")
    .allowUnknownOption()
    .allowExcessArguments()
    .helpOption("-h, --help", "show help (with an operationId: its fields)")
    .action(async (operationId: string | undefined, opts: { list?: boolean }, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const index = await loadOperations(ctx);
      if (opts.list || !operationId) {
        const rows = index.operations.map((o) => ({
          operation: o.id,
          method: o.method,
          path: o.path,
          summary: o.summary.slice(0, 80),
        }));
        return ctx.out.data(rows, () => table(rows, ["operation", "method", "path", "summary"], ctx.out.color));
      }
      const op = index.byId.get(operationId);
      if (!op) throw new UsageError(`no operation "${operationId}"; see \`platform api --list\``);
      const rest = withoutGlobalOptions(cmd.args.slice(1));
      const input = parseFields(rest, op.inputSchema.properties as Record<string, Record<string, unknown>>);
      let request;
      try {
        request = buildRequest(op, input);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      const client = op.public ? ctx.client : ctx.authed();
      const result = await client.request(request.method, request.path, { query: request.query, body: request.body });
      if (typeof result === "string") return ctx.out.data(result, () => result);
      ctx.out.data(result ?? { status: "ok" }, () => JSON.stringify(result ?? { status: "ok" }, null, 2));
    });
}
