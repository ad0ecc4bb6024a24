import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import Fastify from "fastify";
import pino from "pino";
import { lazyChildLogger } from "../../src/http/lazy-logger.js";

describe("request loggers made on first use (http/lazy-logger.ts)", () => {
  it("a request that logs nothing makes no pino child; one that logs writes with its reqId, below the level nothing", async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split("\n")) if (l) lines.push(JSON.parse(l));
        done();
      },
    });
    const logger = pino({ level: "warn" }, sink);
    let children = 0;
    const child = logger.child.bind(logger);
    logger.child = ((...args: Parameters<typeof child>) => {
      children++;
      return child(...args);
    }) as typeof logger.child;
    const app = Fastify({ loggerInstance: logger, childLoggerFactory: lazyChildLogger, genReqId: () => "req-1" });
    app.get("/quiet", async (request) => {
      request.log.info("below the level");
      return { ok: true };
    });
    app.get("/loud", async (request) => {
      request.log.warn({ detail: 7 }, "worth a line");
      request.log.warn("second line, same child");
      return { ok: true };
    });
    await app.ready();
    const atStart = children;
    assert.equal((await app.inject({ url: "/quiet" })).statusCode, 200);
    assert.equal(children - atStart, 0);
    assert.equal(lines.length, 0);
    assert.equal((await app.inject({ url: "/loud" })).statusCode, 200);
    assert.equal(children - atStart, 1);
    assert.equal(lines.length, 2);
    assert.equal(lines[0].reqId, "req-1");
    assert.equal(lines[0].detail, 7);
    assert.equal(lines[0].msg, "worth a line");
    assert.equal(lines[1].reqId, "req-1");
    await app.close();
  });
});
