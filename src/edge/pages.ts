import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { STATUS_CODES } from "node:http";

/** A page the edge answers itself: a status, a title and one sentence; never a stack trace or an upstream's address. */
export interface EdgePage {
  status: number;
  title: string;
  message: string;
  headers?: Record<string, string>;
  /** the sign-in form (e-mail, password) posting to /.platform/sign-in on the same host, returning to `next` */
  signIn?: SignInFormPage;
}

/** The sign-in form; `suite`: a "Sign in with the suite" link too (suite-sign-in.ts, when a suite is configured). */
export interface SignInFormPage {
  next: string;
  error?: string;
  suite?: boolean;
}

export const pages = {
  unknownHost: (): EdgePage => ({
    status: 404,
    title: "Nothing here",
    message: "No app or site is served at this address.",
  }),
  noReplica: (): EdgePage => ({
    status: 503,
    title: "Starting up",
    message: "This app has no running replica right now; try again in a few seconds.",
    headers: { "retry-after": "5" },
  }),
  storeDown: (): EdgePage => ({
    status: 503,
    title: "Temporarily unavailable",
    message: "The edge cannot look up this address right now; try again in a few seconds.",
    headers: { "retry-after": "5" },
  }),
  badGateway: (): EdgePage => ({
    status: 502,
    title: "Bad gateway",
    message: "The app did not answer properly; try again in a moment.",
  }),
  gatewayTimeout: (): EdgePage => ({
    status: 504,
    title: "Gateway timeout",
    message: "The app took too long to answer.",
  }),
  /** scale-to-zero: the app's start after idleness failed or took longer than EDGE_WAKE_TIMEOUT_MS */
  wakeFailed: (): EdgePage => ({
    status: 503,
    title: "Starting up",
    message: "This app was stopped while idle and did not start in time; try again in a few seconds.",
    headers: { "retry-after": "10" },
  }),
  /** scale-to-zero: admission refused the start (funds, budget, quota, department limit); the app stays stopped */
  wakeRefused: (status: number, message: string): EdgePage => ({
    status: status === 402 ? 402 : 503,
    title: "Stopped",
    message: `This app was stopped while idle and cannot be started now: ${message}`,
    headers: { "retry-after": "60" },
  }),
  shuttingDown: (): EdgePage => ({
    status: 503,
    title: "Restarting",
    message: "The edge is restarting; try again in a moment.",
    headers: { "retry-after": "1", connection: "close" },
  }),
};

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const suiteLink = (next: string) =>
  `<p><a class="suite" href="/.platform/suite-sign-in?next=${escape(encodeURIComponent(next))}">Sign in with the suite</a></p>`;

const signInForm = (
  f: SignInFormPage,
) => `${f.error ? `<p class="error">${escape(f.error)}</p>` : ""}${f.suite ? suiteLink(f.next) : ""}
<form method="post" action="/.platform/sign-in">
<input type="hidden" name="next" value="${escape(f.next)}">
<label>E-mail<input name="email" type="email" autocomplete="username" required></label>
<label>Password<input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>`;

function html(page: EdgePage): string {
  const title = `${page.status} ${escape(page.title)}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:15vh auto;max-width:32rem;padding:0 1rem;color:#222}
h1{font-size:1.4rem}p{color:#555}label{display:block;margin:.6rem 0}input{display:block;width:100%;padding:.4rem}
.error{color:#b00}</style></head>
<body><h1>${title}</h1><p>${escape(page.message)}</p>${page.signIn ? signInForm(page.signIn) : ""}</body></html>
`;
}

const BASE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
};

/** Answers a request with an edge page (HEAD gets the headers only). */
export function sendPage(res: ServerResponse, page: EdgePage, method?: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = html(page);
  res.writeHead(page.status, {
    ...BASE_HEADERS,
    "content-length": Buffer.byteLength(body),
    ...page.headers,
  });
  res.end(method === "HEAD" ? undefined : body);
}

/** Answers an upgrade request (the socket has no ServerResponse) with an edge page, then closes it. */
export function sendPageOnSocket(socket: Duplex, page: EdgePage): void {
  if (socket.destroyed) return;
  const body = html(page);
  const headers: Record<string, string | number> = {
    ...BASE_HEADERS,
    "content-length": Buffer.byteLength(body),
    ...page.headers,
    connection: "close",
  };
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\r\n");
  socket.end(`HTTP/1.1 ${page.status} ${STATUS_CODES[page.status] ?? ""}\r\n${head}\r\n\r\n${body}`);
}

/** A redirect (access decisions send visitors to sign in; a partner's visitor link sets its cookie with it). */
export function sendRedirect(res: ServerResponse, location: string, headers?: Record<string, string>): void {
  res.writeHead(302, { ...headers, location, "cache-control": "no-store", "content-length": 0 });
  res.end();
}
