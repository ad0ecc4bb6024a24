import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";

/** Polls until `pred` holds (bounded), then returns what it last saw. */
export async function until<T>(what: string, read: () => T | Promise<T>, pred: (v: T) => boolean, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (pred(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached; last ${JSON.stringify(v).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface NdjsonBatch {
  headers: http.IncomingHttpHeaders;
  lines: any[];
}

/** An NDJSON log receiver as a user would run one: each POST is a batch, one JSON object a line. */
export async function ndjsonReceiver(answer: (n: number) => number | "hang" = () => 200) {
  const batches: NdjsonBatch[] = [];
  let n = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const status = answer(++n);
      if (status === "hang") return;
      const text = Buffer.concat(chunks).toString("utf8");
      if (status >= 200 && status < 300) {
        const lines = text
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l));
        batches.push({ headers: req.headers, lines });
      }
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/logs`,
    batches,
    lines: () => batches.flatMap((b) => b.lines),
    requests: () => n,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A syslog receiver over TCP: octet-counted frames (RFC 6587), each an RFC 5424 message. */
export async function syslogReceiver() {
  const messages: string[] = [];
  const server = net.createServer((socket) => {
    let buf = Buffer.alloc(0);
    socket.on("data", (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const space = buf.indexOf(0x20);
        if (space < 0) return;
        const len = Number(buf.subarray(0, space).toString("ascii"));
        if (buf.length < space + 1 + len) return;
        messages.push(buf.subarray(space + 1, space + 1 + len).toString("utf8"));
        buf = buf.subarray(space + 1 + len);
      }
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `syslog://127.0.0.1:${(server.address() as AddressInfo).port}`,
    messages,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A port nothing listens on (a dead receiver). */
export async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
