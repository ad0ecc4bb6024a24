/** Helpers the HTTP-layer tests share: raw socket exchanges and request bursts. */
import net from "node:net";
import { call, type TestApp } from "../helpers/app.js";

/** Sends raw bytes to a listening app and collects everything until the server closes the connection. */
export function rawExchange(
  port: number,
  write: (socket: net.Socket) => void,
  timeoutMs = 20_000,
): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    let text = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connection still open after ${timeoutMs} ms: ${text}`));
    }, timeoutMs);
    socket.on("connect", () => write(socket));
    socket.on("data", (d) => {
      text += d.toString("utf8");
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text, ms: Date.now() - started });
    });
  });
}

/** Status and parsed JSON body of a raw HTTP/1.1 answer. */
export function parseRaw(text: string): { status: number; body: any } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  const body = text.slice(text.indexOf("\r\n\r\n") + 4);
  return { status, body: JSON.parse(body) };
}

/** Fires n requests at once and counts 2xx per one-second window, read from the clock around the burst. */
export async function burst(apps: TestApp[], tokens: string[], n: number) {
  const started = Date.now();
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      call(apps[i % apps.length].app, { url: "/v1/token", token: tokens[i % tokens.length] }),
    ),
  );
  const windows = Math.floor(Date.now() / 1000) - Math.floor(started / 1000) + 1;
  return {
    results,
    windows,
    ok: results.filter((r) => r.statusCode === 200).length,
    limited: results.filter((r) => r.statusCode === 429),
  };
}
