import http from "node:http";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";

/**
 * A webhook receiver as a customer would write one: it verifies `Platform-Signature` with node:crypto's HMAC
 * (Stripe's scheme: `t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`) and answers what the test tells it to.
 */
export function verify(secret: string, header: string, body: string, toleranceSeconds = 300): boolean {
  const parts = header.split(",").map((p) => p.split("="));
  const t = parts.find(([k]) => k === "t")?.[1];
  if (!t || Math.abs(Date.now() / 1000 - Number(t)) > toleranceSeconds) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest();
  return parts
    .filter(([k]) => k === "v1")
    .some(([, v]) => v.length === expected.length * 2 && timingSafeEqual(Buffer.from(v, "hex"), expected));
}

export interface Received {
  at: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  event: any;
}

export async function startReceiver(answer: (r: Received, n: number) => number | "hang" = () => 200) {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const r = { at: Date.now(), headers: req.headers, body, event: JSON.parse(body) };
      received.push(r);
      for (const w of waiters.splice(0)) w();
      const status = answer(r, received.length);
      if (status === "hang") return;
      res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : `status ${status}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    /** resolves once `pred` holds over what arrived (bounded) */
    async until(pred: (r: Received[]) => boolean, ms = 15_000): Promise<void> {
      const deadline = Date.now() + ms;
      while (!pred(received)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met; got ${received.length} requests`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
