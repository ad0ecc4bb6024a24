/**
 * Uploads over a real socket (the API listening on loopback): an archive far over the API's JSON body limit is
 * streamed through, and one over STATIC_MAX_ARCHIVE_MB gets its 413 error body while the client is still sending.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { call, signup } from "../helpers/app.js";
import { createSite, staticApp, tarArchive, tarEntry, type StaticApp } from "./lib.js";

let s: StaticApp;
let token: string;
let apiPort: number;

before(async () => {
  s = await staticApp({ env: { STATIC_MAX_ARCHIVE_MB: "4" } });
  token = (await signup(s.t.app)).token;
  await createSite(s.t, token, { name: "big-site", slug: "big-site" });
  await s.t.app.listen({ port: 0, host: "127.0.0.1" });
  apiPort = (s.t.app.server.address() as AddressInfo).port;
});
after(async () => s?.close());

/** PUT a body in 64 KiB chunks (chunked encoding: no length announced up front unless given). */
function put(path: string, body: Buffer, headers: http.OutgoingHttpHeaders = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(
      {
        port: apiPort,
        host: "127.0.0.1",
        method: "PUT",
        path,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/x-tar", ...headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on("error", reject);
    let at = 0;
    const next = () => {
      while (at < body.length) {
        const chunk = body.subarray(at, at + 65536);
        at += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", next);
      }
      req.end();
    };
    next();
  });
}

async function deployment(): Promise<string> {
  const res = await call(s.t.app, { method: "POST", url: "/v1/static/big-site/deployments", token });
  return res.json().id;
}

test("a 3 MiB archive streams through (over the API's 1 MiB JSON limit)", async () => {
  const id = await deployment();
  const file = randomBytes(3 * 1024 * 1024);
  const res = await put(`/v1/static/big-site/deployments/${id}/files`, tarArchive([tarEntry("blob.bin", file)]));
  assert.equal(res.status, 200, res.body);
  assert.equal(JSON.parse(res.body).bytes, file.length);
});

test("over the limit: 413 with the one error body, whether the length is announced or not", async () => {
  const id = await deployment();
  const big = tarArchive([tarEntry("blob.bin", randomBytes(5 * 1024 * 1024))]);
  const chunked = await put(`/v1/static/big-site/deployments/${id}/files`, big);
  assert.equal(chunked.status, 413);
  assert.equal(JSON.parse(chunked.body).error.code, "payload_too_large");
  const announced = await put(`/v1/static/big-site/deployments/${id}/files`, big, {
    "content-length": String(big.length),
  });
  assert.equal(announced.status, 413);
  assert.equal(JSON.parse(announced.body).error.code, "payload_too_large");
  // nothing was recorded; the deployment still takes an upload
  const d = await call(s.t.app, { url: `/v1/static/big-site/deployments/${id}`, token });
  assert.equal(d.json().status, "awaiting_upload");
});
