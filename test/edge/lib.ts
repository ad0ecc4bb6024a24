/**
 * Edge test helpers: plain node HTTP servers as upstreams (with a WebSocket echo), a route source the test
 * controls, a test app whose edge is started on a free port, and requests with any Host header.
 */
import http from "node:http";
import { createHash } from "node:crypto";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { createTestApp, type TestApp, type TestAppOptions } from "../helpers/app.js";
import { edgeArea, type Edge } from "../../src/edge/module.js";
import type { EdgeRouteSource, EdgeTarget } from "../../src/kernel/area.js";

export const APPS_DOMAIN = "apps.edge.test";
export const CHANNEL = "edge_test_routes";

export interface Upstream {
  name: string;
  address: string;
  port: number;
  /** requests seen: method, url, headers, body */
  seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[];
  server: http.Server;
  close: () => Promise<void>;
}

/**
 * An upstream answering `{name, url, headers, body}` as JSON (`/stream` sends three chunks 50 ms apart, `/set-cookie`
 * sets cookies, `/slow` answers after 1.5 s), echoing WebSocket text frames prefixed with its name.
 */
export async function upstream(name: string): Promise<Upstream> {
  const seen: Upstream["seen"] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url === "/slow") return void setTimeout(() => res.end("late"), 1500);
      if (req.url === "/stream") {
        res.writeHead(200, { "content-type": "text/plain" });
        let n = 0;
        const tick = setInterval(() => {
          res.write(`chunk${n++}\n`);
          if (n === 3) {
            clearInterval(tick);
            res.end();
          }
        }, 50);
        return;
      }
      const headers: http.OutgoingHttpHeaders = { "content-type": "application/json", "x-upstream": name };
      if (req.url === "/set-cookie")
        headers["set-cookie"] = ["app=1; Path=/", "platform_session=evil; Domain=edge.test"];
      res.writeHead(200, headers);
      res.end(JSON.stringify({ name, url: req.url, headers: req.headers, body }));
    });
  });
  // upgraded sockets leave the server's bookkeeping: kept here so close() can cut them
  const upgraded = new Set<Duplex>();
  server.on("upgrade", (req, socket: Duplex) => {
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
    wsEcho(name, req, socket);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    name,
    port,
    address: `127.0.0.1:${port}`,
    seen,
    server,
    close: async () => {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      for (const socket of upgraded) socket.destroy();
      await closed;
    },
  };
}

const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const accept = (key: string) =>
  createHash("sha1")
    .update(key + WS_GUID)
    .digest("base64");

/** A minimal WebSocket server side: handshake, then every text frame answered with `<name>:<text>`. */
function wsEcho(name: string, req: http.IncomingMessage, socket: Duplex): void {
  socket.write(
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      `Sec-WebSocket-Accept: ${accept(String(req.headers["sec-websocket-key"]))}\r\n\r\n`,
  );
  let buf = Buffer.alloc(0);
  socket.on("data", (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const frame = readFrame(buf);
      if (!frame) return;
      buf = buf.subarray(frame.length);
      if (frame.opcode === 8) return void socket.end();
      socket.write(frameOf(`${name}:${frame.text}`, false));
    }
  });
  socket.on("error", () => {});
  socket.on("end", () => socket.end()); // the other side closed: so do we (HTTP servers allow half-open sockets)
}

function frameOf(text: string, masked: boolean): Buffer {
  const payload = Buffer.from(text);
  if (payload.length > 125) throw new Error("test frames are short");
  const mask = masked ? Buffer.from([1, 2, 3, 4]) : Buffer.alloc(0);
  const body = masked ? payload.map((b, i) => b ^ mask[i % 4]) : payload;
  return Buffer.concat([Buffer.from([0x81, (masked ? 0x80 : 0) | payload.length]), mask, body]);
}

function readFrame(buf: Buffer): { opcode: number; text: string; length: number } | null {
  if (buf.length < 2) return null;
  const masked = (buf[1] & 0x80) !== 0;
  const len = buf[1] & 0x7f;
  const start = 2 + (masked ? 4 : 0);
  if (buf.length < start + len) return null;
  const raw = buf.subarray(start, start + len);
  const payload = masked ? Buffer.from(raw.map((b, i) => b ^ buf[2 + (i % 4)])) : raw;
  return { opcode: buf[0] & 0x0f, text: payload.toString(), length: start + len };
}

/** Opens a WebSocket through the edge, sends one text message and resolves with the first answer. */
export function wsRoundTrip(port: number, host: string, text: string): Promise<{ status: number; reply?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      port,
      host: "127.0.0.1",
      path: "/ws",
      headers: {
        host,
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": Buffer.from("0123456789abcdef").toString("base64"),
      },
    });
    req.on("upgrade", (res, socket: Socket, head) => {
      let buf = head;
      socket.on("data", (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        const frame = readFrame(buf);
        if (frame) {
          socket.destroy();
          resolve({ status: res.statusCode!, reply: frame.text });
        }
      });
      socket.write(frameOf(text, true));
    });
    req.on("response", (res) => {
      res.resume();
      resolve({ status: res.statusCode! });
    });
    req.on("error", reject);
    req.end();
  });
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: () => any;
}

/** A request to the edge with the given Host header. */
export function request(
  port: number,
  host: string,
  opts: { method?: string; path?: string; headers?: http.OutgoingHttpHeaders; body?: string; agent?: http.Agent } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        port,
        host: "127.0.0.1",
        method: opts.method ?? "GET",
        path: opts.path ?? "/",
        headers: { host, ...opts.headers },
        agent: opts.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const body = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode!, headers: res.headers, body, json: () => JSON.parse(body) });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** A route source whose answers the test sets; `notify` announces a change as an app area's trigger would. */
export class FakeSource implements EdgeRouteSource {
  readonly channel = CHANNEL;
  readonly answers = new Map<string, EdgeTarget>();
  calls = 0;

  async resolve(_q: unknown, slug: string): Promise<EdgeTarget | null> {
    this.calls++;
    return this.answers.get(slug) ?? null;
  }

  set(label: string, upstreams: string[], extra: Partial<EdgeTarget> = {}): void {
    this.answers.set(label, {
      kind: "pod",
      id: `id-${label}`,
      owner: { kind: "account", id: "00000000-0000-0000-0000-000000000000" },
      upstreams,
      visibility: "public",
      ...extra,
    });
  }
}

export interface EdgeApp {
  t: TestApp;
  edge: Edge;
  port: number;
  source: FakeSource;
  /** NOTIFY on the fake source's channel, from the store (as a trigger would) */
  notify: (payload?: string) => Promise<void>;
  close: () => Promise<void>;
}

/** A test app with the fake source registered and its edge started on a free port. */
export async function edgeApp(opts: TestAppOptions = {}, source = new FakeSource()): Promise<EdgeApp> {
  const t = await createTestApp({ ...opts, env: { APPS_DOMAIN, ...opts.env } });
  t.platform.kernel.contribute("edgeRoutes", source);
  const edge = t.platform.state<Edge>("edge");
  await edgeArea.start!(t.platform, edge);
  return {
    t,
    edge,
    port: edge.port!,
    source,
    notify: async (payload = "") => {
      await t.db.query("SELECT pg_notify($1, $2)", [CHANNEL, payload]);
    },
    close: () => t.close(),
  };
}

/** Polls until check returns true (every 20 ms), failing after timeoutMs; returns the time it took. */
export async function within(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
