/**
 * ACME off (ACME_DIRECTORY_URL unset, `npm start` on a fresh machine): the HTTPS listener still serves, with the
 * self-signed fallback generated into DATA_DIR; requests are recorded and nothing is issued. The settings.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import https from "node:https";
import type { TLSSocket } from "node:tls";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { edgeConfig } from "../../src/edge/config.js";
import { certificatesConfig, certificateHost } from "../../src/certificates/config.js";
import { retryDelaySeconds, type Certificates } from "../../src/certificates/service.js";
import { fallbackCertificate } from "../../src/edge/fallback-cert.js";
import { edgeApp, upstream, type EdgeApp, type Upstream } from "../edge/lib.js";
import { APPS_DOMAIN as EDGE_DOMAIN } from "../edge/lib.js";
import { altNames, handshake } from "./lib.js";

let e: EdgeApp;
let up: Upstream;
const FALLBACK = "platform edge fallback (self-signed)";

before(async () => {
  e = await edgeApp();
  up = await upstream("plain");
});

after(async () => {
  await e?.close();
  await up?.close();
});

test("ACME off: every name gets the self-signed fallback from DATA_DIR, and HTTPS still proxies", async () => {
  const port = e.edge.tlsPort!;
  assert.ok(port > 0 && port !== e.port);
  e.source.set("web", [up.address]);
  const host = `web.${EDGE_DOMAIN}`;
  const shown = await handshake(port, host);
  assert.equal(shown.cert.subject.CN, FALLBACK);
  assert.deepEqual(altNames(shown.cert).sort(), [EDGE_DOMAIN, `*.${EDGE_DOMAIN}`, "localhost"].sort());
  // no SNI at all (an address typed in): the same fallback
  const bare = await new Promise<string>((resolve, reject) => {
    const req = https.get({ host: "127.0.0.1", port, rejectUnauthorized: false, agent: false, path: "/" }, (res) => {
      res.resume();
      resolve(String((res.socket as TLSSocket).getPeerCertificate().subject.CN));
    });
    req.on("error", reject);
  });
  assert.equal(bare, FALLBACK);

  const dir = path.join(e.t.config.dataDir, "edge-tls");
  const keyFile = path.join(dir, "fallback-key.pem");
  assert.ok(existsSync(path.join(dir, "fallback-cert.pem")));
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  // the same pair at the next start (a developer may trust it once); made again for another apps domain
  const again = await fallbackCertificate(e.t.config.dataDir, EDGE_DOMAIN);
  assert.equal(again.keyPem, readFileSync(keyFile, "utf8"));
  const other = await fallbackCertificate(e.t.config.dataDir, "apps.elsewhere.example");
  assert.notEqual(other.keyPem, again.keyPem);

  // HTTPS to an app: proxied like plain HTTP, the upstream told the visitor came over TLS
  const answer = await new Promise<any>((resolve, reject) => {
    https
      .get(
        { host: "127.0.0.1", port, servername: host, headers: { host }, rejectUnauthorized: false, agent: false },
        (res) => {
          let body = "";
          res.on("data", (d) => (body += d));
          res.on("end", () => resolve({ status: res.statusCode, json: JSON.parse(body) }));
        },
      )
      .on("error", reject);
  });
  assert.equal(answer.status, 200);
  assert.equal(answer.json.headers["x-forwarded-proto"], "https");
});

test("ACME off: a request is recorded pending and nothing is queued or issued", async () => {
  const certs = e.t.platform.state<Certificates>("certificates");
  assert.equal(certs.acmeEnabled, false);
  await certs.request(e.t.db, "Shop.Example.com.");
  await certs.request(e.t.db, "not a host");
  await certs.request(e.t.db, "10.0.0.1");
  const { rows } = await e.t.db.query("SELECT host, status FROM tls_certificates ORDER BY host");
  // the app host of the first test was asked for on demand at its handshake: recorded too, for when ACME is on
  assert.deepEqual(rows, [
    { host: "shop.example.com", status: "pending" },
    { host: `web.${EDGE_DOMAIN}`, status: "pending" },
  ]);
  assert.deepEqual(await certs.renewDue(), []);
  assert.equal(await certs.load(e.t.db, "shop.example.com"), null);
  assert.equal(await certs.challenge(e.t.db, "../../etc"), null);
});

test("settings: EDGE_TLS_PORT, ACME_*; host names; back-off", () => {
  assert.equal(edgeConfig({}).tlsPort, 8443);
  assert.equal(edgeConfig({ EDGE_PORT: "0" }).tlsPort, 0);
  assert.equal(edgeConfig({ EDGE_TLS_PORT: "9443" }).tlsPort, 9443);
  assert.equal(edgeConfig({ EDGE_TLS_PORT: "off" }).tlsPort, null);
  assert.throws(() => edgeConfig({ EDGE_TLS_PORT: "https" }), /EDGE_TLS_PORT/);
  assert.deepEqual(certificatesConfig({}), { directoryUrl: null, email: null, caFile: null, renewDays: 30 });
  assert.throws(() => certificatesConfig({ ACME_DIRECTORY_URL: "ftp://x" }), /ACME_DIRECTORY_URL/);
  assert.throws(() => certificatesConfig({ ACME_EMAIL: "nobody" }), /ACME_EMAIL/);
  assert.throws(() => certificatesConfig({ ACME_RENEW_DAYS: "0" }), /ACME_RENEW_DAYS/);
  assert.equal(certificateHost("*.example.com"), null);
  assert.equal(certificateHost("localhost"), null);
  assert.equal(certificateHost("A.Example.COM."), "a.example.com");
  assert.deepEqual([1, 2, 3, 10].map(retryDelaySeconds), [60, 240, 960, 86_400]);
});

test("EDGE_TLS_PORT=off: no HTTPS listener", async () => {
  const off = await edgeApp({ databaseUrl: e.t.url, env: { EDGE_TLS_PORT: "off" } });
  try {
    assert.equal(off.edge.tlsPort, null);
    assert.ok(off.port > 0);
  } finally {
    await off.close();
  }
});
