/**
 * Error reports: on failure the CLI sends one report to POST /v1/cli/errors with the spec's fields,
 * while it prints the error, and waits for it at most REPORT_TIMEOUT_MS. Nothing secret goes out:
 * flags are sent by name only (never their values), positional arguments not at all, and tokens,
 * bearer headers and passwords in URLs or JSON are masked in the message.
 * PLATFORM_NO_ERROR_REPORTS=1 turns reports off.
 */
import { arch, platform, release } from "node:os";
import { PlatformApiError, PlatformNetworkError, PlatformOperationError } from "@hosting-platform/sdk";
import { ExitError, UsageError } from "./exit.js";

export const REPORT_TIMEOUT_MS = 1500;

export interface CliErrorReport {
  occurred_at: string;
  kind: string;
  cli_version: string;
  os: string;
  command: string;
  flags: string[];
  status?: number;
  code?: string;
  cf_ray?: string;
  edge?: string;
  retries: number;
  message: string;
  api_host: string;
}

/** Masks anything that could be a credential. */
export function scrub(text: string): string {
  return text
    .replace(/\b(op_u_|opk_|op_)[A-Za-z0-9_-]+/g, "$1***")
    .replace(/(bearer\s+)\S+/gi, "$1***")
    .replace(/([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^@\s]*@/gi, "$1***@")
    .replace(/("?(?:password|passwd|token|key|secret)[a-z_]*"?\s*[:=]\s*)("[^"]*"|\S+)/gi, "$1***");
}

export function shouldReport(err: unknown, env: NodeJS.ProcessEnv): boolean {
  if (env.PLATFORM_NO_ERROR_REPORTS === "1" || env.PLATFORM_NO_ERROR_REPORTS === "true") return false;
  if (err instanceof UsageError || err instanceof ExitError) return false;
  // a refused token cannot send a report either
  if (err instanceof PlatformApiError && err.status === 401) return false;
  return true;
}

export function buildReport(
  err: unknown,
  ctx: { command: string; argv: string[]; version: string; apiUrl: string },
): CliErrorReport {
  const flags = [
    ...new Set(ctx.argv.filter((a) => a.startsWith("-") && a !== "-" && a !== "--").map((a) => a.split("=")[0])),
  ].slice(0, 100);
  const kind =
    err instanceof PlatformApiError
      ? "api_error"
      : err instanceof PlatformNetworkError
        ? "network_error"
        : err instanceof PlatformOperationError
          ? "operation_failed"
          : "internal_error";
  const report: CliErrorReport = {
    occurred_at: new Date().toISOString(),
    kind,
    cli_version: ctx.version,
    os: `${platform()} ${release()} ${arch()} node ${process.versions.node}`.slice(0, 100),
    command: ctx.command.slice(0, 500),
    flags,
    retries: (err as { retries?: number })?.retries ?? 0,
    message: scrub(
      err instanceof Error
        ? kind === "internal_error"
          ? `${err.message}\n${err.stack ?? ""}`
          : err.message
        : String(err),
    ).slice(0, 8000),
    api_host: safeHost(ctx.apiUrl),
  };
  if (err instanceof PlatformApiError) {
    report.status = err.status;
    report.code = err.code;
    if (err.cfRay) report.cf_ray = err.cfRay.slice(0, 100);
    if (err.edge) report.edge = err.edge.slice(0, 100);
  }
  return report;
}

function safeHost(url: string): string {
  try {
    return new URL(url).host.slice(0, 255);
  } catch {
    return "";
  }
}

/** Sends the report; resolves within REPORT_TIMEOUT_MS whatever happens, and never throws. */
export async function sendReport(report: CliErrorReport, apiUrl: string, token: string): Promise<boolean> {
  try {
    const res = await fetch(`${apiUrl}/v1/cli/errors`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ reports: [report] }),
      signal: AbortSignal.timeout(REPORT_TIMEOUT_MS),
    });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}
