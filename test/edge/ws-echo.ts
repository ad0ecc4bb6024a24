/**
 * A WebSocket echo app in a container, and a WebSocket client for the tests: both written out from RFC 6455
 * (handshake, masking, 7/16/64-bit lengths, ping/pong, close) so nothing but node runs on either side.
 *
 * The image is this host's node binary and its libraries (test/apps/node-pg-image.ts) with the script below, over
 * busybox; built again only when the script changes.
 */
import http from "node:http";
import { createHash, randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import { nodeFiles } from "../apps/node-pg-image.js";
import { buildImage, TEST_IMAGE_PREFIX } from "../helpers/images.js";

/**
 * The app, on 8080: GET answers `ws-echo <host>`; an upgrade is accepted, the first frame (server → client,
 * unasked) is the handshake as the app saw it (`{hello, host, url, xff, xfh, xfp}`), then text and binary frames
 * come back unchanged, a ping gets its pong, a close its close.
 */
const ECHO = `
const http = require("node:http");
const crypto = require("node:crypto");
const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
function frame(opcode, payload) {
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x80 | opcode, n]) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (n >= 126) {
    head[0] = 0x80 | opcode;
    head[1] = n < 65536 ? 126 : 127;
    if (n < 65536) head.writeUInt16BE(n, 2);
    else head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}
function parse(buf) {
  if (buf.length < 2) return null;
  let len = buf[1] & 0x7f, at = 2;
  if (len === 126) { if (buf.length < 4) return null; len = buf.readUInt16BE(2); at = 4; }
  else if (len === 127) { if (buf.length < 10) return null; len = Number(buf.readBigUInt64BE(2)); at = 10; }
  const masked = (buf[1] & 0x80) !== 0;
  const start = at + (masked ? 4 : 0);
  if (buf.length < start + len) return null;
  const payload = Buffer.from(buf.subarray(start, start + len));
  if (masked) for (let i = 0; i < len; i++) payload[i] ^= buf[at + (i % 4)];
  return { opcode: buf[0] & 0x0f, masked, payload, length: start + len };
}
const server = http.createServer((req, res) => {
  res.setHeader("content-type", "text/plain");
  res.end("ws-echo " + req.headers.host + "\\n");
});
server.on("upgrade", (req, socket, head) => {
  socket.on("error", () => socket.destroy());
  const key = req.headers["sec-websocket-key"];
  if (String(req.headers.upgrade).toLowerCase() !== "websocket" || !key)
    return socket.end("HTTP/1.1 400 Bad Request\\r\\nconnection: close\\r\\ncontent-length: 0\\r\\n\\r\\n");
  const accept = crypto.createHash("sha1").update(key + GUID).digest("base64");
  socket.write("HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n" +
    "Sec-WebSocket-Accept: " + accept + "\\r\\n\\r\\n");
  const h = req.headers;
  const hello = { hello: true, host: h.host, url: req.url, xff: h["x-forwarded-for"], xfh: h["x-forwarded-host"], xfp: h["x-forwarded-proto"] };
  socket.write(frame(1, Buffer.from(JSON.stringify(hello))));
  let buf = Buffer.from(head || []);
  socket.on("data", (d) => {
    buf = Buffer.concat([buf, d]);
    for (let f = parse(buf); f; f = parse(buf)) {
      buf = buf.subarray(f.length);
      if (!f.masked) return socket.destroy(); // clients must mask (RFC 6455 5.1)
      if (f.opcode === 8) return void socket.end(frame(8, f.payload));
      if (f.opcode === 9) socket.write(frame(10, f.payload));
      else if (f.opcode === 1 || f.opcode === 2) socket.write(frame(f.opcode, f.payload));
    }
  });
  socket.on("end", () => socket.end());
});
server.listen(8080, () => console.log("ws-echo listening on 8080"));
process.on("SIGTERM", () => { server.close(); process.exit(0); });
`;

export const WS_ECHO_IMAGE = `${TEST_IMAGE_PREFIX}/node-ws-echo:1`;

/** Builds (or finds, by content) the echo app's image. */
export async function buildWsEchoImage(): Promise<string> {
  return buildImage(WS_ECHO_IMAGE, { ...(await nodeFiles()), "/app/echo.js": ECHO }, [
    "/usr/local/bin/node",
    "/app/echo.js",
  ]);
}

export interface Frame {
  opcode: number;
  payload: Buffer;
}

export const OP = { text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** A client frame: always masked, with a fresh mask. */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x80 | opcode, 0x80 | n]) : Buffer.alloc(n < 65536 ? 4 : 10);
  if (n >= 126) {
    head[0] = 0x80 | opcode;
    head[1] = 0x80 | (n < 65536 ? 126 : 127);
    if (n < 65536) head.writeUInt16BE(n, 2);
    else head.writeBigUInt64BE(BigInt(n), 2);
  }
  const mask = randomBytes(4);
  const body = Buffer.from(payload);
  for (let i = 0; i < n; i++) body[i] ^= mask[i % 4];
  return Buffer.concat([head, mask, body]);
}

/** A server frame (unmasked) at the start of buf, with its length, or null when incomplete. */
function serverFrame(buf: Buffer): (Frame & { length: number; masked: boolean }) | null {
  if (buf.length < 2) return null;
  let len = buf[1] & 0x7f;
  let at = 2;
  if (len === 126) {
    if (buf.length < 4) return null;
    len = buf.readUInt16BE(2);
    at = 4;
  } else if (len === 127) {
    if (buf.length < 10) return null;
    len = Number(buf.readBigUInt64BE(2));
    at = 10;
  }
  const masked = (buf[1] & 0x80) !== 0;
  if (buf.length < at + len) return null;
  return { opcode: buf[0] & 0x0f, masked, payload: Buffer.from(buf.subarray(at, at + len)), length: at + len };
}

/** A WebSocket client connection: frames are queued as they arrive and taken with `next()`. */
export class WsClient {
  private buf = Buffer.alloc(0);
  private readonly queue: Frame[] = [];
  private waiting: ((f: Frame | null) => void) | null = null;
  private ended = false;
  readonly closed: Promise<void>;

  private constructor(
    private readonly socket: Socket,
    head: Buffer,
  ) {
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.on("data", (d: Buffer) => this.take(d));
    socket.on("close", () => {
      this.ended = true;
      this.waiting?.(null);
    });
    socket.on("error", () => {});
    if (head.length) this.take(head);
  }

  /**
   * Opens a WebSocket to 127.0.0.1:port with the given Host header. Not upgraded: the status and body of the
   * answer. Upgraded: the client, once the server's Sec-WebSocket-Accept has been checked.
   */
  static open(
    port: number,
    host: string,
    path = "/",
  ): Promise<{ status: number; headers: http.IncomingHttpHeaders; body?: string; client?: WsClient }> {
    const key = randomBytes(16).toString("base64");
    return new Promise((resolve, reject) => {
      const req = http.request({
        port,
        host: "127.0.0.1",
        path,
        headers: {
          host,
          connection: "Upgrade",
          upgrade: "websocket",
          "sec-websocket-version": "13",
          "sec-websocket-key": key,
        },
      });
      req.setTimeout(10_000, () => req.destroy(new Error("WebSocket handshake timed out")));
      req.on("upgrade", (res, socket: Socket, head: Buffer) => {
        const expected = createHash("sha1")
          .update(key + GUID)
          .digest("base64");
        if (res.headers["sec-websocket-accept"] !== expected) {
          socket.destroy();
          return reject(new Error(`bad Sec-WebSocket-Accept: ${res.headers["sec-websocket-accept"]}`));
        }
        resolve({ status: res.statusCode!, headers: res.headers, client: new WsClient(socket, head) });
      });
      req.on("response", (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      });
      req.on("error", reject);
      req.end();
    });
  }

  private take(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    for (let f = serverFrame(this.buf); f; f = serverFrame(this.buf)) {
      this.buf = this.buf.subarray(f.length);
      if (f.masked) throw new Error("a server frame was masked");
      const frame = { opcode: f.opcode, payload: f.payload };
      const waiting = this.waiting;
      this.waiting = null;
      if (waiting) waiting(frame);
      else this.queue.push(frame);
    }
  }

  send(opcode: number, payload: Buffer | string): void {
    this.socket.write(clientFrame(opcode, Buffer.from(payload)));
  }

  /** The next frame from the server; fails when the connection closes first or nothing comes within timeoutMs. */
  next(timeoutMs = 5000): Promise<Frame> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.ended) return Promise.reject(new Error("the WebSocket is closed"));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        reject(new Error(`no frame within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting = (f) => {
        clearTimeout(timer);
        if (f) resolve(f);
        else reject(new Error("the WebSocket closed"));
      };
    });
  }

  destroy(): void {
    this.socket.destroy();
  }
}
