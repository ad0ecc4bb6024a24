import { createServer, type Server } from "node:http";
import { asApiError } from "../http/errors.js";
import type { SignedToken } from "./token.js";

/** What the token endpoint does, wherever it is served (the API route and the loopback realm below). */
export type IssueToken = (authorization: string | undefined, query: URLSearchParams) => Promise<SignedToken>;

export const TOKEN_PATH = "/v1/registry/token";

/**
 * The token endpoint on a loopback port the registry area owns. The registry must be told its realm
 * when it starts, which is before the API listens (and with PORT=0 before its port is known), so
 * unless REGISTRY_TOKEN_REALM names the API's own /v1/registry/token, clients on this host are sent
 * here: the same handler, answering only GET /v1/registry/token.
 */
export class LoopbackRealm {
  private server: Server | null = null;

  constructor(private readonly issue: IssueToken) {}

  async start(): Promise<string> {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
        res.end(JSON.stringify(body));
      };
      if (req.method !== "GET" || url.pathname !== TOKEN_PATH) {
        send(404, { error: { code: "not_found", message: "Only GET /v1/registry/token is served here." } });
        return;
      }
      this.issue(req.headers.authorization, url.searchParams).then(
        (token) => send(200, token),
        (err: unknown) => {
          const api = asApiError(err);
          const status = api?.status ?? 500;
          const headers: Record<string, string> =
            status === 401 ? { "www-authenticate": 'Basic realm="platform registry"' } : {};
          send(
            status,
            { error: { code: api?.code ?? "internal", message: api?.message ?? "internal error" } },
            headers,
          );
        },
      );
    });
    server.requestTimeout = 30_000;
    server.headersTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    this.server = server;
    return `http://127.0.0.1:${(server.address() as { port: number }).port}${TOKEN_PATH}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
