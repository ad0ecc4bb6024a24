import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createPlatformClient } from "@hosting-platform/sdk";
import { ExitError } from "../exit.js";
import type { Output } from "../output.js";

/** What the exchange answers (POST /v1/auth/suite/exchange). */
export interface SuiteSession {
  token: string;
  account: { id: string; email: string };
  org_id: string;
  setup_pending: boolean;
  role: string | null;
}

const NOTICES: Record<string, string> = {
  suite_setup_pending: "Your company's setup is not finished yet; sign in again once an admin has finished it.",
  suite_join_department: "Only staff of the departments your company chose can join; ask an admin.",
  suite_join_invite: "Only staff an admin invited can join; ask an admin to invite your e-mail address.",
  suite_not_linked: "Your company is not linked yet; its suite enterprise admin signs in first.",
};

const page = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;margin:3rem">` +
  `<h1>${title}</h1><p>${text}</p></body>`;

/** Opens the address in the desktop's browser, if there is one; the address is printed either way. */
function openBrowser(url: string): void {
  const [cmd, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(cmd, args, { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // no browser here: the printed address is enough
  }
}

/**
 * `platform login --suite`: a one-shot HTTP server on 127.0.0.1 receives the browser back from the suite sign-in
 * (`/callback?suite_code=…`, or `?notice=…` when the sign-in is held or refused); the one-time code is exchanged for
 * a sign-in token, so no token ever travels in a URL.
 */
export async function suiteLogin(
  apiUrl: string,
  out: Output,
  opts: { open: boolean; timeoutMs?: number; userAgent: string },
): Promise<SuiteSession> {
  let server: Server | undefined;
  const received = new Promise<string>((resolve, reject) => {
    server = createServer((req, res) => {
      const u = new URL(req.url ?? "/", "http://127.0.0.1");
      if (u.pathname !== "/callback") {
        res.writeHead(404).end();
        return;
      }
      const code = u.searchParams.get("suite_code");
      const notice = u.searchParams.get("notice");
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      if (code) {
        res.end(page("Signed in", "You can close this window and go back to the terminal."));
        resolve(code);
      } else {
        const why = (notice && NOTICES[notice]) ?? "The suite sign-in could not be finished.";
        res.end(page("Not signed in", why));
        reject(new ExitError(`${why}${notice ? ` (${notice})` : ""}`, 1));
      }
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server!.address() as AddressInfo;
  try {
    const returnTo = `http://127.0.0.1:${port}/callback`;
    const start = `${apiUrl}/v1/auth/suite/start?return_to=${encodeURIComponent(returnTo)}`;
    out.error(`Open this address to sign in with the suite:\n  ${start}`);
    if (opts.open) openBrowser(start);
    const timeoutMs = opts.timeoutMs ?? 5 * 60_000;
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      received,
      new Promise<never>((_r, reject) => {
        timer = setTimeout(
          () => reject(new ExitError(`No sign-in came back within ${timeoutMs / 60_000} minutes.`, 1)),
          timeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    const anonymous = createPlatformClient({ baseUrl: apiUrl, headers: { "user-agent": opts.userAgent } });
    return (await anonymous.request("POST", "/v1/auth/suite/exchange", { body: { code } })) as SuiteSession;
  } finally {
    server!.closeAllConnections();
    server!.close();
  }
}
