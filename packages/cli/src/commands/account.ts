import type { Command } from "commander";
import { createPlatformClient, unwrap } from "@hosting-platform/sdk";
import { updateProfile } from "../config.js";
import { contextOf, VERSION } from "../context.js";
import { UsageError } from "../exit.js";
import { details, table } from "../output.js";
import { promptLine, readAllStdin } from "../prompt.js";
import { suiteLogin } from "./suite-login.js";

export function accountCommands(program: Command): void {
  program
    .command("login")
    .description("Sign in and store the token in the profile (config file mode 0600)")
    .option("--token <token>", "store an existing op_u_ token or opk_ key instead of signing in")
    .option("--email <email>", "sign in with e-mail and password")
    .option("--password-stdin", "read the password from standard input")
    .option("--suite", "sign in with the workplace suite in the browser (a one-shot server on 127.0.0.1 receives it)")
    .option("--no-browser", "with --suite: only print the address to open, do not start a browser")
    .action(
      async (
        opts: { token?: string; email?: string; passwordStdin?: boolean; suite?: boolean; browser?: boolean },
        cmd: Command,
      ) => {
        const { out, session } = await contextOf(cmd);
        let token = opts.token;
        let email = opts.email;
        let orgHint = "";
        if (opts.suite) {
          if (token || email) throw new UsageError("login --suite takes neither --token nor --email");
          const signedIn = await suiteLogin(session.apiUrl, out, {
            open: opts.browser !== false,
            userAgent: `platform-cli/${VERSION}`,
          });
          token = signedIn.token;
          email = signedIn.account.email;
          // a suite account creates only company assets (403 org_only otherwise)
          orgHint = "; it works for its organization: add --org (or set PLATFORM_OWNER=org) to commands that create";
        }
        if (!token) {
          if (!email) {
            if (!process.stdin.isTTY)
              throw new UsageError("login needs --token, or --email with --password-stdin, when not on a terminal");
            email = await promptLine("E-mail: ");
          }
          const password = opts.passwordStdin
            ? (await readAllStdin()).replace(/\r?\n$/, "")
            : process.stdin.isTTY
              ? await promptLine("Password: ", true)
              : "";
          if (!password) throw new UsageError("no password given (use --password-stdin when not on a terminal)");
          const anonymous = createPlatformClient({
            baseUrl: session.apiUrl,
            headers: { "user-agent": `platform-cli/${VERSION}` },
          });
          token = (await unwrap(anonymous.api.POST("/v1/auth/login", { body: { email, password } }))).token;
        }
        // the token is checked before it is stored
        const checker = createPlatformClient({ baseUrl: session.apiUrl, token });
        const info = await unwrap(checker.api.GET("/v1/token"));
        const file = await updateProfile(session.profileName, (p) => ({
          ...p,
          api_url: session.apiUrl,
          token,
          email: email ?? p?.email,
          databases: p?.databases,
        }));
        out.data(
          { profile: session.profileName, api_url: session.apiUrl, kind: info.kind, scopes: info.scopes, config: file },
          () =>
            `Logged in to ${session.apiUrl} as profile "${session.profileName}" (${info.kind}, scopes ${info.scopes.join(" ")}); token stored in ${file}${orgHint}`,
        );
      },
    );

  program
    .command("logout")
    .description("Forget the profile's token (a sign-in token is also revoked on the server)")
    .action(async (_opts: unknown, cmd: Command) => {
      const { out, session, client } = await contextOf(cmd);
      if (session.profile?.token?.startsWith("op_u_")) await client.api.POST("/v1/auth/logout").catch(() => undefined);
      await updateProfile(session.profileName, (p) => (p ? { ...p, token: undefined } : undefined));
      out.data(
        { profile: session.profileName, logged_out: true },
        () => `Logged out of profile "${session.profileName}".`,
      );
    });

  program
    .command("whoami")
    .description("Show the account and token in use")
    .action(async (_opts: unknown, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const client = ctx.authed();
      const token = await unwrap(client.api.GET("/v1/token"));
      const me =
        token.kind === "full" || token.scopes.includes("*")
          ? await unwrap(client.api.GET("/v1/me")).catch(() => null)
          : null;
      const view = {
        api_url: ctx.session.apiUrl,
        profile: ctx.session.profileName,
        email: me?.email ?? ctx.session.profile?.email ?? null,
        account_id: token.account_id,
        token_kind: token.kind,
        scopes: token.scopes,
        expires_at: token.expires_at,
      };
      ctx.out.data(view, () => details(view, Object.keys(view), ctx.out.color));
    });

  const keys = program.command("keys").description("Scoped API keys (opk_)");
  keys
    .command("list", { isDefault: true })
    .description("List keys")
    .action(async (_opts: unknown, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const list = await unwrap(ctx.authed().api.GET("/v1/api-keys"));
      ctx.out.data(list, () =>
        table(list as never, ["id", "name", "prefix", "scopes", "expires_at", "last_used_at"], ctx.out.color),
      );
    });
  keys
    .command("create <name>")
    .description("Issue a key; it is shown once")
    .requiredOption("--scope <scope...>", "scopes, e.g. databases:read databases:write:my-db")
    .option("--expires-at <time>", "RFC 3339 expiry")
    .action(async (name: string, opts: { scope: string[]; expiresAt?: string }, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const key = await unwrap(
        ctx.authed().api.POST("/v1/api-keys", {
          body: { name, scopes: opts.scope, ...(opts.expiresAt ? { expires_at: opts.expiresAt } : {}) },
        }),
      );
      ctx.out.data(
        key,
        () =>
          `${details(key as never, ["id", "name", "scopes", "expires_at"], ctx.out.color)}\n\nKey (shown once): ${key.key}`,
      );
    });
  keys
    .command("revoke <id>")
    .description("Revoke a key")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = await contextOf(cmd);
      await ctx.authed().api.DELETE("/v1/api-keys/{id}", { params: { path: { id } } });
      ctx.out.data({ id, revoked: true }, () => `Revoked ${id}.`);
    });
}
