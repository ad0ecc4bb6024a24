/**
 * Certificate test helpers: Debian's pebble (an ACME test CA) on loopback with a TLS certificate of its own made
 * here, a dns2 server telling pebble every name is 127.0.0.1 (names starting `unreachable` are 127.0.0.2, where
 * nothing listens), a test app with ACME pointed at pebble and its edge on a port pebble validates against, and a
 * TLS handshake with SNI that reports the certificate it was shown.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import tls, { type PeerCertificate } from "node:tls";
import dns2 from "dns2";
import { freePort } from "../../src/pgserver/cluster.js";
import { createTestApp, type TestApp, type TestAppOptions } from "../helpers/app.js";
import type { Edge } from "../../src/edge/module.js";
import { FakeSource } from "../edge/lib.js";

export const PEBBLE = "/usr/bin/pebble";
/** why the tests skip, or false when pebble is there */
export const NO_PEBBLE = existsSync(PEBBLE) ? false : `${PEBBLE} is missing (apt-get install pebble)`;
export const APPS_DOMAIN = "apps.certs-test.example";

export interface Dns {
  port: number;
  /** names asked, with their type */
  asked: string[];
  close: () => Promise<void>;
}

/** A DNS server answering A 127.0.0.1 for every name (127.0.0.2 for `unreachable*`), nothing else. */
export async function startDns(): Promise<Dns> {
  const asked: string[] = [];
  const { Packet } = dns2;
  const server = dns2.createServer({
    udp: true,
    tcp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      for (const q of request.questions) {
        asked.push(`${q.type}:${q.name}`);
        if (q.type === Packet.TYPE.A)
          response.answers.push({
            name: q.name,
            type: Packet.TYPE.A,
            class: Packet.CLASS.IN,
            ttl: 1,
            address: q.name.startsWith("unreachable") ? "127.0.0.2" : "127.0.0.1",
          } as never);
      }
      void send(response);
    },
  });
  const port = await freePort();
  await server.listen({ udp: { port, address: "127.0.0.1" }, tcp: { port, address: "127.0.0.1" } });
  return { port, asked, close: () => server.close() };
}

export interface Pebble {
  directoryUrl: string;
  /** the CA of pebble's own HTTPS listener (ACME_CA_FILE) */
  caFile: string;
  caPem: string;
  /** pebble's issuing intermediate and its root, regenerated at every launch */
  intermediatePem: () => Promise<string>;
  rootPem: () => Promise<string>;
  log: () => string;
  close: () => Promise<void>;
}

/** Pebble on free loopback ports, validating HTTP-01 on `httpPort`, resolving names through `dnsPort`. */
export async function startPebble(httpPort: number, dnsPort: number): Promise<Pebble> {
  const dir = mkdtempSync(path.join(tmpdir(), "pebble-"));
  const [cert, key, config] = ["cert.pem", "key.pem", "pebble.json"].map((f) => path.join(dir, f));
  const made = spawnSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
    "-subj", "/CN=pebble test listener", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
    "-keyout", key, "-out", cert,
  ]); // prettier-ignore
  if (made.status !== 0) throw new Error(`openssl: ${made.stderr}`);
  const [listen, management, tlsPort] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(
    config,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${listen}`,
        managementListenAddress: `127.0.0.1:${management}`,
        certificate: cert,
        privateKey: key,
        httpPort,
        tlsPort,
        ocspResponderURL: "",
        externalAccountBindingRequired: false,
      },
    }),
  );
  let out = "";
  const child: ChildProcess = spawn(
    PEBBLE,
    ["-config", config, "-dnsserver", `127.0.0.1:${dnsPort}`, "-strict=false"],
    {
      env: { PATH: process.env.PATH!, PEBBLE_VA_NOSLEEP: "1", PEBBLE_WFE_NONCEREJECT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const keep = (d: Buffer) => (out = (out + d).slice(-20_000));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const caPem = readFileSync(cert, "utf8");
  const get = (url: string) => httpsGet(url, caPem);
  const directoryUrl = `https://127.0.0.1:${listen}/dir`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`pebble exited: ${out}`);
    if ((await get(directoryUrl).catch(() => null))?.status === 200) break;
    if (i > 200) throw new Error(`pebble not ready: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    directoryUrl,
    caFile: cert,
    caPem,
    intermediatePem: async () => (await get(`https://127.0.0.1:${management}/intermediates/0`)).body,
    rootPem: async () => (await get(`https://127.0.0.1:${management}/roots/0`)).body,
    log: () => out,
    close: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function httpsGet(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca, agent: false }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      })
      .on("error", reject);
  });
}

export interface CertApp {
  t: TestApp;
  edge: Edge;
  source: FakeSource;
  close: () => Promise<void>;
}

/** A test app with jobs running, ACME at pebble, its edge on `edgePort` (pebble's httpPort) and a free TLS port. */
export async function certApp(pebble: Pebble, edgePort: number, opts: TestAppOptions = {}): Promise<CertApp> {
  const t = await createTestApp({
    startJobs: true,
    ...opts,
    env: {
      APPS_DOMAIN,
      ACME_DIRECTORY_URL: pebble.directoryUrl,
      ACME_CA_FILE: pebble.caFile,
      ACME_EMAIL: "ops@certs-test.example",
      EDGE_PORT: String(edgePort),
      EDGE_TLS_PORT: "0",
      ...opts.env,
    },
  });
  const source = new FakeSource();
  // Edge.resolve asks the kernel's sources at every miss, so one added after start serves too
  t.platform.kernel.contribute("edgeRoutes", source);
  return { t, edge: t.platform.state<Edge>("edge"), source, close: () => t.close() };
}

export interface Handshake {
  cert: PeerCertificate;
  /** whether the chain verified against the CA given */
  authorized: boolean;
  error: string | null;
}

/** A TLS handshake with SNI `servername` (no request): the certificate shown and whether `ca` vouches for it. */
export function handshake(port: number, servername: string, ca?: string): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ port, host: "127.0.0.1", servername, ca, rejectUnauthorized: false }, () => {
      const cert = socket.getPeerCertificate(true);
      const error = socket.authorizationError ? String(socket.authorizationError) : null;
      resolve({ cert, authorized: socket.authorized, error });
      socket.end();
    });
    socket.on("error", reject);
  });
}

/** The DNS names of a peer certificate's subject alternative name. */
export function altNames(cert: PeerCertificate): string[] {
  return (cert.subjectaltname ?? "")
    .split(", ")
    .filter((s) => s.startsWith("DNS:"))
    .map((s) => s.slice(4));
}
