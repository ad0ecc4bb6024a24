import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { createPlatformClient, type PlatformClient } from "@hosting-platform/sdk";
import { resolveSession, type Session } from "./config.js";
import { createOutput, type Output } from "./output.js";
import { UsageError } from "./exit.js";

export const VERSION = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

export interface GlobalOptions {
  json?: boolean;
  profile?: string;
  apiUrl?: string;
  org?: boolean;
}

/** What every command works with: output, the session (profile + environment) and an SDK client. */
export interface Context {
  out: Output;
  session: Session;
  client: PlatformClient;
  /** the client, refusing to go on without a token */
  authed(): PlatformClient;
}

/** Filled in as the command runs, so a failure report knows where it happened. */
export const runState: { session: Session | null; out: Output | null } = { session: null, out: null };

export async function contextOf(cmd: Command): Promise<Context> {
  const opts = cmd.optsWithGlobals<GlobalOptions>();
  const out = createOutput(Boolean(opts.json));
  const session = await resolveSession({ profile: opts.profile, apiUrl: opts.apiUrl });
  runState.session = session;
  runState.out = out;
  const client = createPlatformClient({
    baseUrl: session.apiUrl,
    token: session.token,
    owner: opts.org || process.env.PLATFORM_OWNER === "org" ? "org" : undefined,
    headers: { "user-agent": `platform-cli/${VERSION} node/${process.versions.node}` },
    onRetry: (info) => {
      if (out.interactive)
        out.error(
          `retrying ${info.method} ${new URL(info.url).pathname} in ${Math.ceil(info.delayMs / 100) / 10}s: ${info.reason}`,
        );
    },
  });
  return {
    out,
    session,
    client,
    authed() {
      if (!session.token)
        throw new UsageError(
          `Not logged in (profile "${session.profileName}"): run \`platform login\` or set PLATFORM_TOKEN.`,
        );
      return client;
    },
  };
}
