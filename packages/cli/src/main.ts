/**
 * `platform`: the command-line client, over @hosting-platform/sdk. Commands: login, logout, whoami,
 * keys, db, billing, api (any operation by operationId), mcp. --json everywhere; exit codes in exit.ts;
 * error reports in report.ts (PLATFORM_NO_ERROR_REPORTS=1 turns them off).
 */
import { Command, CommanderError } from "commander";
import { PlatformApiError } from "@hosting-platform/sdk";
import { runState, VERSION } from "./context.js";
import { EXIT, exitCodeOf } from "./exit.js";
import { red } from "./output.js";
import { buildReport, sendReport, shouldReport } from "./report.js";
import { accountCommands } from "./commands/account.js";
import { dbCommands } from "./commands/db.js";
import { billingCommands } from "./commands/billing.js";
import { apiCommand } from "./commands/api.js";
import { mcpCommand } from "./commands/mcp.js";

export function buildProgram(): Command {
  const program = new Command("platform")
    .description("Command-line client of the hosting platform")
    .version(VERSION)
    .option("--json", "machine-readable JSON output")
    .option(
      "--org",
      "act for your organization (X-Owner: org): what you create is a company asset ($PLATFORM_OWNER=org)",
    )
    .option("--profile <name>", "configuration profile (default: $PLATFORM_PROFILE or default)")
    .option("--api-url <url>", "API address (default: $PLATFORM_API_URL, the profile's, or http://127.0.0.1:8080)")
    .showHelpAfterError()
    .exitOverride();
  accountCommands(program);
  dbCommands(program);
  billingCommands(program);
  apiCommand(program);
  mcpCommand(program);
  // every subcommand: errors come back to main() instead of exiting
  const override = (cmd: Command) => {
    cmd.exitOverride();
    cmd.commands.forEach(override);
  };
  override(program);
  return program;
}

/** Runs one invocation; resolves to the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const program = buildProgram();
  let commandPath = "";
  program.hook("preAction", (_this, action) => {
    const names: string[] = [];
    for (let c: Command | null = action; c && c !== program; c = c.parent) names.unshift(c.name());
    commandPath = names.join(" ");
  });
  try {
    await program.parseAsync(argv, { from: "user" });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and --version end here too, with code 0
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const session = runState.session;
    const token = session?.token;
    const report =
      token && session && shouldReport(err, env)
        ? sendReport(
            buildReport(err, { command: commandPath, argv, version: VERSION, apiUrl: session.apiUrl }),
            session.apiUrl,
            token,
          )
        : null;
    printError(err, runState.out?.json ?? argv.includes("--json"));
    // the report went out while the error was printed; bounded by REPORT_TIMEOUT_MS
    if (report) await report;
    return exitCodeOf(err);
  }
}

const KIND_OF_EXIT: Record<number, string> = {
  [EXIT.usage]: "usage_error",
  [EXIT.network]: "network_error",
  [EXIT.operation]: "operation_failed",
  [EXIT.internal]: "internal_error",
  [EXIT.notFound]: "psql_not_found",
};

function printError(err: unknown, json: boolean): void {
  const color = Boolean(process.stderr.isTTY) && !process.env.NO_COLOR;
  if (json) {
    const body =
      err instanceof PlatformApiError
        ? { error: { code: err.code, message: err.message, status: err.status, request_id: err.requestId } }
        : {
            error: { code: KIND_OF_EXIT[exitCodeOf(err)] ?? "error", message: (err as Error)?.message ?? String(err) },
          };
    process.stderr.write(JSON.stringify(body) + "\n");
    return;
  }
  const message =
    err instanceof PlatformApiError
      ? `${err.message} (${err.code}, HTTP ${err.status}${err.requestId ? `, request ${err.requestId}` : ""})`
      : ((err as Error)?.message ?? String(err));
  process.stderr.write(`${red(color, "Error:")} ${message}\n`);
  if (exitCodeOf(err) === EXIT.internal && err instanceof Error && err.stack) process.stderr.write(err.stack + "\n");
}
