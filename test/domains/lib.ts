/**
 * Custom domain test helpers: a DNS server on loopback (dns2, UDP) whose zones the test sets, a fake Cloudflare
 * API speaking the documented envelope, a route source standing for apps, and a test app wired to all three.
 */
import http from "node:http";
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import dns2 from "dns2";
import { call, createTestApp, signup, type TestApp } from "../helpers/app.js";
import type { EdgeRouteSource, EdgeTarget } from "../../src/kernel/area.js";

const { Packet } = dns2;
const { NXDOMAIN, SERVFAIL } = (Packet as unknown as { RCODE: { NXDOMAIN: number; SERVFAIL: number } }).RCODE;
type Answer = (typeof Packet.prototype.answers)[number];

export const APPS_DOMAIN = "apps.domains.test";
export const BASE_DOMAIN = "platform.test";
export const CHANNEL = "domains_test_routes";

type Rr = { type: "TXT" | "CNAME" | "NS" | "A"; value: string };

/** An authoritative-looking DNS server: records by name, names that never answer (for timeouts), a query log. */
export class TestDns {
  readonly records = new Map<string, Rr[]>();
  readonly silent = new Set<string>();
  /** names answered with SERVFAIL */
  readonly failing = new Set<string>();
  readonly asked: { name: string; type: number }[] = [];
  port = 0;
  private server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      const name = q.name.toLowerCase().replace(/\.$/, "");
      this.asked.push({ name, type: q.type });
      if (this.silent.has(name)) return; // no answer at all: the client times out
      if (this.failing.has(name)) {
        response.header.rcode = SERVFAIL;
        return send(response);
      }
      const rrs = this.records.get(name);
      if (!rrs) {
        response.header.rcode = NXDOMAIN;
        return send(response);
      }
      for (const rr of rrs) {
        if (Packet.TYPE[rr.type] !== q.type) continue;
        const base = { name: q.name, type: q.type, class: Packet.CLASS.IN, ttl: 1 };
        if (rr.type === "TXT") response.answers.push({ ...base, data: rr.value } as unknown as Answer);
        else if (rr.type === "CNAME") response.answers.push({ ...base, domain: rr.value } as unknown as Answer);
        else if (rr.type === "NS") response.answers.push({ ...base, ns: rr.value } as unknown as Answer);
        else response.answers.push({ ...base, address: rr.value } as unknown as Answer);
      }
      send(response);
    },
  });

  async start(): Promise<void> {
    await this.server.listen({ udp: { port: 0, address: "127.0.0.1" } });
    this.port = (this.server.addresses().udp as AddressInfo).port;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  add(name: string, type: Rr["type"], value: string): void {
    const list = this.records.get(name) ?? [];
    list.push({ type, value });
    this.records.set(name, list);
  }

  /** every record of name (and of type, when given) goes */
  remove(name: string, type?: Rr["type"]): void {
    const list = (this.records.get(name) ?? []).filter((r) => type !== undefined && r.type !== type);
    if (list.length) this.records.set(name, list);
    else this.records.delete(name);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

/** A route source standing for apps: slug → target (owner, upstreams) as the test sets it. */
export class TestApps implements EdgeRouteSource {
  readonly channel = CHANNEL;
  readonly answers = new Map<string, EdgeTarget>();

  async resolve(_q: unknown, slug: string): Promise<EdgeTarget | null> {
    return this.answers.get(slug) ?? null;
  }

  set(slug: string, ownerId: string, upstreams: string[] = [], kind = "pod"): void {
    this.answers.set(slug, {
      kind,
      id: `id-${slug}-${ownerId.slice(0, 8)}`,
      owner: { kind: "account", id: ownerId },
      upstreams,
      visibility: "public",
    });
  }
}

/** A test app whose DNS questions go to the test server and whose apps are the test's route source. */
export async function domainsApp(
  dns: TestDns,
  env: Record<string, string> = {},
): Promise<{ t: TestApp; apps: TestApps; notify: () => Promise<void> }> {
  const t = await createTestApp({
    env: { APPS_DOMAIN, BASE_DOMAIN, DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: "400", ...env },
  });
  const apps = new TestApps();
  t.platform.kernel.contribute("edgeRoutes", apps);
  return { t, apps, notify: async () => void (await t.db.query("SELECT pg_notify($1, '')", [CHANNEL])) };
}

export const uniqueDomain = (prefix = "www") => `${prefix}.d${randomBytes(4).toString("hex")}.example.com`;

export async function user(t: TestApp) {
  return signup(t.app);
}

export const addDomain = (t: TestApp, token: string, slug: string, domain: string) =>
  call(t.app, { method: "POST", url: `/v1/apps/${slug}/domains`, token, body: { domain } });

export const verify = (t: TestApp, token: string, slug: string, id: string) =>
  call(t.app, { method: "POST", url: `/v1/apps/${slug}/domains/${id}/verify`, token, body: {} });

/** Audit rows of the given operation (audit_log.action is the operationId). */
export async function audited(t: TestApp, action: string): Promise<{ target: string | null; status: number }[]> {
  const { rows } = await t.db.query<{ target: string | null; status: number }>(
    "SELECT target, status FROM audit_log WHERE action = $1 ORDER BY created_at",
    [action],
  );
  return rows;
}

interface CfRecord {
  id: string;
  type: string;
  name: string;
  content: string;
  proxied: boolean;
  ttl: number;
}

/**
 * The part of Cloudflare's API v4 cf-autosetup uses, with its envelope ({success, errors, messages, result,
 * result_info}) and a bearer check. Records written here also appear in the test DNS server when `dns` is given
 * (as Cloudflare's nameservers would answer them).
 */
export class FakeCloudflare {
  readonly zones = new Map<string, { id: string; name: string }>();
  readonly records = new Map<string, CfRecord[]>();
  readonly calls: { method: string; url: string; authorization: string | undefined; body: string }[] = [];
  /** set to make every call answer 500 with this Cloudflare error */
  failWith: { status: number; code: number; message: string } | null = null;
  port = 0;
  private server = http.createServer((req, res) => this.handle(req, res));

  constructor(
    readonly token: string,
    private readonly dns: TestDns | null = null,
  ) {}

  get base(): string {
    return `http://127.0.0.1:${this.port}/client/v4`;
  }

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", () => r()));
    this.port = (this.server.address() as AddressInfo).port;
  }

  addZone(name: string): string {
    const id = randomBytes(16).toString("hex");
    this.zones.set(id, { id, name });
    this.records.set(id, []);
    return id;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }

  private send(res: http.ServerResponse, status: number, result: unknown, errors: unknown[] = []): void {
    const body = {
      success: status < 400,
      errors,
      messages: [],
      result,
      result_info: Array.isArray(result)
        ? { page: 1, per_page: 100, count: result.length, total_count: result.length }
        : undefined,
    };
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      this.calls.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, body });
      if (this.failWith)
        return this.send(res, this.failWith.status, null, [
          { code: this.failWith.code, message: this.failWith.message },
        ]);
      if (req.headers.authorization !== `Bearer ${this.token}`)
        return this.send(res, 403, null, [{ code: 10000, message: "Authentication error" }]);
      const url = new URL(req.url!, "http://x");
      const path = url.pathname.replace(/^\/client\/v4/, "");
      if (req.method === "GET" && path === "/zones") {
        const name = url.searchParams.get("name");
        return this.send(
          res,
          200,
          [...this.zones.values()].filter((z) => !name || z.name === name),
        );
      }
      const m = /^\/zones\/([^/]+)\/dns_records(?:\/([^/]+))?$/.exec(path);
      const records = m && this.records.get(m[1]);
      if (!m || !records) return this.send(res, 404, null, [{ code: 7003, message: "Could not route to " + path }]);
      if (req.method === "GET" && !m[2]) {
        const type = url.searchParams.get("type");
        const name = url.searchParams.get("name");
        return this.send(
          res,
          200,
          records.filter((r) => (!type || r.type === type) && (!name || r.name === name)),
        );
      }
      const input = JSON.parse(body || "{}") as Partial<CfRecord>;
      if (req.method === "POST" && !m[2]) {
        if (!input.type || !input.name || !input.content)
          return this.send(res, 400, null, [{ code: 9000, message: "DNS record type, name and content are required" }]);
        if (input.type === "CNAME" && records.some((r) => r.name === input.name))
          return this.send(res, 400, null, [
            { code: 81053, message: "An A, AAAA, or CNAME record with that host already exists." },
          ]);
        const rec: CfRecord = {
          id: randomBytes(16).toString("hex"),
          type: input.type,
          name: input.name,
          content: input.content,
          proxied: !!input.proxied,
          ttl: input.ttl ?? 1,
        };
        records.push(rec);
        this.publish(rec);
        return this.send(res, 200, rec);
      }
      const rec = records.find((r) => r.id === m[2]);
      if (req.method === "PATCH" && rec) {
        Object.assign(rec, { content: input.content ?? rec.content, proxied: input.proxied ?? rec.proxied });
        this.publish(rec);
        return this.send(res, 200, rec);
      }
      return this.send(res, 404, null, [{ code: 81044, message: "Record does not exist." }]);
    });
  }

  /** a record written here is what DNS answers from now on (proxied CNAMEs answer with Cloudflare's addresses) */
  private publish(rec: CfRecord): void {
    if (!this.dns) return;
    this.dns.remove(rec.name, rec.type as "TXT" | "CNAME");
    if (rec.type === "CNAME" && rec.proxied) this.dns.add(rec.name, "A", "104.16.0.1");
    else this.dns.add(rec.name, rec.type as "TXT" | "CNAME", rec.content);
  }
}
