/**
 * Certificates from a real ACME server (Debian's pebble on loopback): issued for a host asked through
 * kernel.certificates.request, stored with the key sealed, served by SNI on the edge's HTTPS listener, obtained on
 * demand for <slug>.<APPS_DOMAIN>, renewed within ACME_RENEW_DAYS, and a failed order recorded in the row.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import https from "node:https";
import { randomUUID, X509Certificate } from "node:crypto";
import { call, signup } from "../helpers/app.js";
import { freePort } from "../../src/pgserver/cluster.js";
import { inTransaction } from "../../src/store/db.js";
import type { Certificates } from "../../src/certificates/module.js";
import { request as plainRequest, upstream, within, type Upstream } from "../edge/lib.js";
import {
  APPS_DOMAIN,
  NO_PEBBLE,
  altNames,
  certApp,
  handshake,
  startDns,
  startPebble,
  type CertApp,
  type Dns,
  type Pebble,
} from "./lib.js";

let dns: Dns;
let pebble: Pebble;
let app: CertApp;
let up: Upstream;
let issuerName: string;
let root: string;

const certs = () => app.t.platform.state<Certificates>("certificates");
const row = async (host: string) =>
  (await app.t.db.query("SELECT * FROM tls_certificates WHERE host = $1", [host])).rows[0];
const tlsPort = () => app.edge.tlsPort!;

async function issued(host: string, timeoutMs = 60_000): Promise<void> {
  await within(`a certificate for ${host}`, timeoutMs, async () => (await row(host))?.status === "valid");
}

describe("ACME certificates (pebble)", { skip: NO_PEBBLE }, () => {
  before(async () => {
    dns = await startDns();
    const edgePort = await freePort();
    pebble = await startPebble(edgePort, dns.port);
    app = await certApp(pebble, edgePort);
    up = await upstream("secure");
    issuerName = new X509Certificate(await pebble.intermediatePem()).subject;
    root = await pebble.rootPem();
  });

  after(async () => {
    await app?.close();
    await up?.close();
    await pebble?.close();
    await dns?.close();
  });

  test("a host requested through kernel.certificates is issued, stored sealed and served by SNI", async () => {
    const host = "shop.custom-test.example";
    // as the custom-domains area does at verification, inside its transaction (the job starts after commit)
    await inTransaction(app.t.db, (tx) => app.t.platform.kernel.use("certificates")!.request(tx, host));
    assert.equal((await row(host)).status, "pending");
    await issued(host);

    const stored = await row(host);
    assert.match(stored.key_sealed, /^enc:v1:/);
    assert.match(stored.cert_pem, /BEGIN CERTIFICATE/);
    assert.equal(stored.attempts, 0);
    assert.equal(stored.last_error, null);
    assert.ok(stored.not_after > new Date(Date.now() + 60 * 86_400_000), "a fresh certificate");
    // no private key anywhere in clear: the certificate's, nor the ACME account's
    for (const table of ["tls_certificates", "acme_accounts"]) {
      const { rows } = await app.t.db.query(`SELECT row_to_json(t)::text AS j FROM ${table} t`);
      assert.ok(rows.length > 0);
      for (const r of rows) assert.doesNotMatch(r.j, /PRIVATE KEY/, table);
    }
    // the challenge answer is gone once the order is done
    assert.equal((await app.t.db.query("SELECT count(*)::int AS n FROM acme_challenges")).rows[0].n, 0);

    const shown = await handshake(tlsPort(), host, root);
    assert.deepEqual(altNames(shown.cert), [host]);
    assert.equal(`CN=${shown.cert.issuer.CN}`, issuerName, "issued by pebble's intermediate");
    // the chain (leaf and intermediate) verifies against pebble's root, for that name
    assert.equal(shown.authorized, true, shown.error ?? "");
    assert.equal(
      shown.cert.serialNumber.toLowerCase(),
      new X509Certificate(stored.cert_pem).serialNumber.toLowerCase(),
    );
    const key = await certs().load(app.t.db, host);
    assert.match(key!.keyPem, /BEGIN PRIVATE KEY/);
  });

  test("<slug>.<APPS_DOMAIN>: the fallback at the first handshake, the ACME certificate soon after", async () => {
    app.source.set("store", [up.address]);
    const host = `store.${APPS_DOMAIN}`;
    const first = await handshake(tlsPort(), host);
    assert.equal(first.cert.subject.CN, "platform edge fallback (self-signed)");
    assert.ok(altNames(first.cert).includes(`*.${APPS_DOMAIN}`));
    await within("the ACME certificate to be served", 60_000, async () => {
      const shown = await handshake(tlsPort(), host);
      return `CN=${shown.cert.issuer.CN}` === issuerName && altNames(shown.cert).includes(host);
    });
    // a name the edge does not route gets the fallback and no certificate is asked for it
    const nobody = `nobody.${APPS_DOMAIN}`;
    assert.equal((await handshake(tlsPort(), nobody)).cert.subject.CN, "platform edge fallback (self-signed)");
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await row(nobody), undefined);
  });

  test("HTTPS requests are proxied to the upstream with X-Forwarded-Proto https", async () => {
    app.source.set("store", [up.address]);
    const host = `store.${APPS_DOMAIN}`;
    await issued(host);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = https.request(
        {
          host: "127.0.0.1",
          port: tlsPort(),
          servername: host,
          path: "/hello",
          headers: { host },
          // verified against pebble's root, for that name
          ca: root,
          agent: false,
        },
        (res) => {
          let body = "";
          res.on("data", (d) => (body += d));
          res.on("end", () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on("error", reject);
      req.end();
    });
    assert.equal(answer.status, 200);
    const seen = JSON.parse(answer.body);
    assert.equal(seen.url, "/hello");
    assert.equal(seen.headers["x-forwarded-proto"], "https");
    assert.equal(seen.headers["x-forwarded-host"], host);
  });

  test("the HTTP-01 path answers only known tokens, on any host, as plain text", async () => {
    const port = app.edge.port!;
    await app.t.db.query(
      `INSERT INTO acme_challenges (token, host, key_authorization, expires_at)
       VALUES ('tok-en_1', 'x.example', 'tok-en_1.thumb', now() + interval '1 minute'),
              ('old', 'x.example', 'old.thumb', now() - interval '1 second')`,
    );
    const known = await plainRequest(port, "anything.example", { path: "/.well-known/acme-challenge/tok-en_1" });
    assert.equal(known.status, 200);
    assert.equal(known.body, "tok-en_1.thumb");
    assert.match(String(known.headers["content-type"]), /^text\/plain/);
    for (const path of [
      "/.well-known/acme-challenge/nope",
      "/.well-known/acme-challenge/old",
      "/.well-known/acme-challenge/../x",
    ])
      assert.equal((await plainRequest(port, "anything.example", { path })).status, 404, path);
    await app.t.db.query("DELETE FROM acme_challenges");
  });

  test("renewal: a certificate expiring within ACME_RENEW_DAYS is re-issued by the renewal job", async () => {
    const host = "shop.custom-test.example";
    await issued(host);
    const before = await row(host);
    await app.t.db.query("UPDATE tls_certificates SET not_after = now() + interval '5 days' WHERE host = $1", [host]);
    await app.t.jobs.send("certificates.renew", {});
    await within("the certificate to be renewed", 60_000, async () => {
      const now = await row(host);
      return now.cert_pem !== before.cert_pem && now.status === "valid";
    });
    const renewed = await row(host);
    assert.ok(renewed.not_after > new Date(Date.now() + 60 * 86_400_000));
    assert.notEqual(renewed.key_sealed, before.key_sealed, "a fresh key");
    // every edge drops its TLS context on the NOTIFY: the next handshake shows the new certificate
    const serial = new X509Certificate(renewed.cert_pem).serialNumber.toLowerCase();
    await within("the renewed certificate to be served", 2000, async () => {
      return (await handshake(tlsPort(), host)).cert.serialNumber.toLowerCase() === serial;
    });
    // nothing else is due now
    assert.deepEqual(await certs().renewDue(), []);
  });

  test("an order whose challenge the CA cannot reach leaves the row failed with the error, and nothing throws", async () => {
    const host = "unreachable.custom-test.example";
    // a verified custom domain of a user's names the host (its DNS verification is test/domains'): the failure is
    // an event for that user (issue 31)
    const user = await signup(app.t.app);
    const domainId = randomUUID();
    await app.t.db.query(
      `INSERT INTO custom_domains (id, owner_kind, owner_id, account_id, domain, app_kind, app_id, app_slug,
         verification_token, status, verified_at, verified_by) VALUES ($1, 'account', $2, $2, $3, 'pod', 'x', 'x', 't', 'verified', now(), 'txt')`,
      [domainId, user.id, host],
    );
    await certs().request(app.t.db, host);
    await within("the order to fail", 60_000, async () => (await row(host)).status === "failed");
    const events = (await call(app.t.app, { url: "/v1/events?type=domain.*", token: user.token })).json().items;
    assert.deepEqual(
      events.map((e: any) => [e.type, e.resource.id, e.data.domain]),
      [["domain.certificate_failed", domainId, host]],
    );
    assert.match(events[0].data.reason, /127\.0\.0\.2|connection refused/i);
    const failed = await row(host);
    assert.equal(failed.attempts, 1);
    // the CA's reason: it could not connect to the address the name resolves to
    assert.match(failed.last_error, /127\.0\.0\.2|connection refused/i);
    assert.equal(failed.cert_pem, null);
    assert.equal(failed.key_sealed, null);
    assert.ok(failed.next_attempt_at > new Date(Date.now() + 30_000), "backed off");
    assert.equal(failed.claim, null);
    // asking again during the back-off changes nothing and queues nothing
    await certs().request(app.t.db, host);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await row(host)).attempts, 1);
    assert.deepEqual(await certs().renewDue(), []);
    // the edge still answers that name: fallback certificate, and a page rather than an error
    assert.equal((await handshake(tlsPort(), host)).cert.subject.CN, "platform edge fallback (self-signed)");
    assert.equal((await plainRequest(app.edge.port!, host)).status, 404);
  });

  test("two processes over one store: one issuance per host", async () => {
    const second = await certApp(pebble, await freePort(), { databaseUrl: app.t.url });
    try {
      const host = "twice.custom-test.example";
      // recorded without a job (as if its job were lost), then both processes run the issuance at once
      await app.t.db.query("INSERT INTO tls_certificates (host) VALUES ($1)", [host]);
      const other = second.t.platform.state<Certificates>("certificates");
      let orders = 0;
      for (const c of [certs(), other]) {
        const issuer = (c as unknown as { d: { issuer: { issue: (...a: unknown[]) => Promise<unknown> } } }).d.issuer;
        const issue = issuer.issue.bind(issuer);
        issuer.issue = (...a) => (orders++, issue(...a));
      }
      await Promise.all([certs().issue(host), other.issue(host)]);
      assert.equal((await row(host)).status, "valid");
      assert.equal(orders, 1, "one ACME order");
      // the second process serves it too (the same store): its own SNI cache loads it
      const shown = await handshake(second.edge.tlsPort!, host);
      assert.deepEqual(altNames(shown.cert), [host]);
    } finally {
      await second.close();
    }
  });
});
