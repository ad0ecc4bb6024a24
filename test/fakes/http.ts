import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  raw: string;
}

export interface FakeResponse {
  status: number;
  body: unknown;
  /** extra response headers (Retry-After of a 429) */
  headers?: Record<string, string>;
}

/** A local HTTP server for a provider fake; every request is logged for assertions. */
export async function startFakeServer(
  handle: (req: FakeRequest) => Promise<FakeResponse> | FakeResponse,
): Promise<{ url: string; server: Server; log: FakeRequest[]; close: () => Promise<void> }> {
  const log: FakeRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const fr: FakeRequest = {
        method: req.method ?? "GET",
        path: req.url ?? "/",
        headers: req.headers,
        raw: Buffer.concat(chunks).toString("utf8"),
      };
      log.push(fr);
      let out: FakeResponse;
      try {
        out = await handle(fr);
      } catch (err) {
        out = { status: 500, body: { error: { message: String(err) } } };
      }
      const text = JSON.stringify(out.body);
      res.writeHead(out.status, {
        ...out.headers,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Parses Stripe's form encoding: a[b]=1&a[c][0]=x into nested objects and arrays. */
export function parseStripeForm(raw: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    const parts = key.split(/[[\]]+/).filter((p) => p !== "");
    let node: Record<string, unknown> = out;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) node[part] = value;
      else node = (node[part] ??= {}) as Record<string, unknown>;
    });
  }
  return out;
}
