import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type net from "node:net";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { parseRaw, rawExchange } from "./http-helpers.js";

describe("the server's own limits answer in the one error body", () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp({
      env: { HTTP_HEADERS_TIMEOUT_MS: "1000", HTTP_REQUEST_TIMEOUT_MS: "2000", HTTP_KEEP_ALIVE_TIMEOUT_MS: "1000" },
    });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  after(async () => {
    await t.close();
  });

  test("headers over the server's limit are 431 headers_too_large", async () => {
    const { text } = await rawExchange(port, (s) =>
      s.write(`GET /v1/edition HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(64 * 1024)}\r\n\r\n`),
    );
    const { status, body } = parseRaw(text);
    assert.equal(status, 431);
    assert.equal(body.error.code, "headers_too_large");
  });

  test("a request that is not HTTP is 400 invalid_request", async () => {
    const { text } = await rawExchange(port, (s) => s.write("BLAH\u0001 / HTTP/9\r\n\r\n"));
    const { status, body } = parseRaw(text);
    assert.equal(status, 400);
    assert.equal(body.error.code, "invalid_request");
  });

  test("slow clients are dropped with 408: headers dribbled byte by byte, or a body that never completes", async () => {
    const dribble = (s: net.Socket) => {
      s.write("GET /v1/edition HTTP/1.1\r\nHost: x\r\n");
      const timer = setInterval(() => {
        if (!s.destroyed) s.write("X");
      }, 200);
      s.on("close", () => clearInterval(timer));
    };
    const stalledBody = (s: net.Socket) =>
      s.write(
        `POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`,
      );
    const results = await Promise.all(
      [dribble, dribble, dribble, stalledBody].map((w) => rawExchange(port, w, 10_000)),
    );
    for (const { text, ms } of results) {
      assert.ok(ms < 5000, `dropped after ${ms} ms`);
      const { status, body } = parseRaw(text);
      assert.equal(status, 408, text);
      assert.equal(body.error.code, "request_timeout");
    }
  });

  test("the server still answers others after dropping slow clients", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/v1/edition`);
    assert.equal(res.status, 200);
  });
});
