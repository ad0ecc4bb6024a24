import { readFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import tls from "node:tls";
import type { WakeHandler, WakeOutcome } from "../wake.js";
import type { InstanceContext } from "./context.js";

/*
 * Wake on connection (issue 30): while a dev database is idle-stopped, this process listens on its ports (the
 * server's, and the pooler's when pooling is on) in the server's place. A connection is taken as far as the
 * server would take it before authentication: SSLRequest answered 'S' and TLS with the instance's own
 * certificate, the startup packet read, the client's address checked against the allowlist (as pg_hba would).
 * Then the wake handler starts the database (one start for every connection of this process: they share one
 * promise; across processes the store decides) and the connection is piped to the server's Unix socket, where
 * the client authenticates with its own password as usual. A start that fails answers a Postgres ErrorResponse
 * (FATAL 57P03) the client shows, instead of a bare close.
 *
 * Piped over the socket, not TCP: the server admits TCP clients only from allowed addresses, and the loopback
 * address of this process is not one of them when the customer has an allowlist; the front enforces it itself,
 * as PgBouncer does (pool.ts). A pooled client woken this way gets a direct session for its connection.
 */

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
/** a client that says nothing for this long is dropped (the server's authentication_timeout is 60 s) */
const STARTUP_TIMEOUT_MS = 30_000;

interface Front {
  servers: net.Server[];
  /** the instance as it was when held: ports, allowlist, certificate, socket */
  ctx: InstanceContext;
}

/** A Postgres ErrorResponse packet (severity FATAL). */
export function errorResponse(code: string, message: string): Buffer {
  const fields = [
    ["S", "FATAL"],
    ["V", "FATAL"],
    ["C", code],
    ["M", message],
  ];
  const body = Buffer.concat([
    ...fields.map(([k, v]) => Buffer.concat([Buffer.from(k), Buffer.from(v, "utf8"), Buffer.from([0])])),
    Buffer.from([0]),
  ]);
  const head = Buffer.alloc(5);
  head.write("E", 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/** exactly n bytes from a paused stream, or an error when it closes or says nothing in time */
function readBytes(s: net.Socket, n: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      s.off("readable", tryRead);
      s.off("end", closed);
      s.off("close", closed);
    };
    const tryRead = () => {
      const b = s.read(n) as Buffer | null;
      if (b) {
        cleanup();
        resolve(b);
      }
    };
    const closed = () => {
      cleanup();
      reject(new Error("the client closed the connection"));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error("the client sent no startup packet in time"));
    }, STARTUP_TIMEOUT_MS);
    s.on("readable", tryRead);
    s.once("end", closed);
    s.once("close", closed);
    tryRead();
  });
}

/** one length-prefixed startup-phase packet: its code and the whole packet */
async function readStartupPacket(s: net.Socket): Promise<{ code: number; packet: Buffer }> {
  const head = await readBytes(s, 8);
  const len = head.readInt32BE(0);
  if (len < 8 || len > 10_000) throw new Error("not a PostgreSQL startup packet");
  const rest = len > 8 ? await readBytes(s, len - 8) : Buffer.alloc(0);
  return { code: head.readInt32BE(4), packet: Buffer.concat([head, rest]) };
}

function startupParams(packet: Buffer): Record<string, string> {
  const parts = packet.subarray(8).toString("utf8").split("\0");
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < parts.length && parts[i]; i += 2) out[parts[i]] = parts[i + 1];
  return out;
}

function allowedBy(ranges: string[]): net.BlockList {
  const list = new net.BlockList();
  for (const cidr of ranges) {
    const [addr, prefix] = cidr.split("/");
    const type = net.isIPv6(addr) ? "ipv6" : "ipv4";
    list.addSubnet(addr, Number(prefix), type);
  }
  return list;
}

function clientAllowed(ctx: InstanceContext, address: string | undefined): boolean {
  const customer = ctx.record.allowlist.length ? ctx.record.allowlist : ["0.0.0.0/0", "::/0"];
  const list = allowedBy([...ctx.env.alwaysAllowed, ...customer]);
  const addr = (address ?? "").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
  if (!net.isIP(addr)) return false;
  return list.check(addr, net.isIPv6(addr) ? "ipv6" : "ipv4");
}

/** The fronts this process holds for idle-stopped instances of its host. */
export class WakeFronts {
  private readonly fronts = new Map<string, Front>();
  /** this process's wake under way per instance: concurrent connections wait for the same one */
  private readonly waking = new Map<string, Promise<WakeOutcome>>();
  private handler: WakeHandler | null = null;
  /** connections piped to a woken server by this process (tests, logs) */
  piped = 0;
  /** connections taken and waiting for their instance's start now (tests, logs) */
  waiting = 0;

  /** @param reload the instance's current record and paths (provider's load) */
  constructor(private readonly reload?: (id: string) => Promise<InstanceContext>) {}

  setHandler(handler: WakeHandler | null): void {
    this.handler = handler;
  }

  held(): string[] {
    return [...this.fronts.keys()];
  }

  /**
   * Listens on the instance's ports; false when one is taken (its server runs, or another process of this host
   * holds the front). Only with a wake handler: without one no connection could be answered.
   */
  async hold(ctx: InstanceContext): Promise<boolean> {
    const id = ctx.record.id;
    if (this.fronts.has(id)) return true;
    if (!this.handler) return false;
    const secureContext = tls.createSecureContext({
      cert: await readFile(ctx.layout.certFile),
      key: await readFile(ctx.layout.keyFile),
    });
    const ports = [ctx.record.port, ...(ctx.record.pool ? [ctx.record.pool.port] : [])];
    const servers: net.Server[] = [];
    for (const port of ports) {
      const server = net.createServer((sock) => void this.serve(id, ctx, sock, secureContext));
      const ok = await new Promise<boolean>((resolve) => {
        server.once("error", () => resolve(false));
        // every address, as the server listens (settings.ts)
        server.listen(port, () => resolve(true));
      });
      if (!ok) {
        for (const s of servers) s.close();
        return false;
      }
      server.on("error", () => {});
      servers.push(server);
    }
    if (this.fronts.has(id)) {
      for (const s of servers) s.close(); // held meanwhile by a concurrent call
      return true;
    }
    this.fronts.set(id, { servers, ctx });
    return true;
  }

  /** Gives the ports up for the server; connections already taken keep waiting for it. */
  async release(id: string): Promise<void> {
    const front = this.fronts.get(id);
    if (!front) return;
    this.fronts.delete(id);
    // close() stops listening at once; its callback waits for every connection taken to end, and those are the
    // ones waiting for this very start (a deadlock, broken only by the clients' timeouts: seen in CI). The
    // listening handle is gone by the next turn of the loop, so the server can bind the port.
    for (const s of front.servers) s.close();
    await new Promise((r) => setImmediate(r));
  }

  async releaseAll(): Promise<void> {
    for (const id of this.held()) await this.release(id);
  }

  private wake(id: string): Promise<WakeOutcome> {
    let w = this.waking.get(id);
    if (!w) {
      const handler = this.handler;
      w = (
        handler
          ? handler(id).catch((err: Error) => ({ ok: false as const, message: err.message }))
          : Promise.resolve({ ok: false as const, message: "no process of this host can start it now" })
      ).finally(() => this.waking.delete(id));
      this.waking.set(id, w);
    }
    return w;
  }

  private async serve(id: string, ctx: InstanceContext, raw: net.Socket, secureContext: tls.SecureContext) {
    raw.on("error", () => {});
    raw.setNoDelay(true);
    let client: net.Socket = raw;
    try {
      let first = await readStartupPacket(raw);
      if (first.code === GSS_REQUEST) {
        raw.write("N");
        first = await readStartupPacket(raw);
      }
      if (first.code === CANCEL_REQUEST) return raw.destroy(); // nothing runs to cancel while it sleeps
      let encrypted = false;
      if (first.code === SSL_REQUEST) {
        raw.write("S");
        const secure = new tls.TLSSocket(raw, { isServer: true, secureContext });
        secure.on("error", () => {});
        client = secure;
        await new Promise<void>((resolve, reject) => {
          secure.once("secure", resolve);
          secure.once("close", () => reject(new Error("TLS handshake failed")));
        });
        encrypted = true;
        first = await readStartupPacket(secure);
      }
      if (first.code === CANCEL_REQUEST) return client.destroy();
      if (first.code !== PROTOCOL_3) {
        client.end(errorResponse("0A000", "unsupported frontend protocol"));
        return;
      }
      // the allowlist as it is now (it may have changed while the instance slept)
      ctx = (await this.reload?.(id).catch(() => null)) ?? ctx;
      const params = startupParams(first.packet);
      const who = `host "${(raw.remoteAddress ?? "").replace(/^::ffff:/, "")}", user "${params.user ?? ""}", database "${params.database ?? params.user ?? ""}"`;
      if (!encrypted || !clientAllowed(ctx, raw.remoteAddress)) {
        // what the server's pg_hba answers: TCP clients only with TLS, only from allowed addresses
        client.end(
          errorResponse("28000", `no pg_hba.conf entry for ${who}, ${encrypted ? "SSL encryption" : "no encryption"}`),
        );
        return;
      }
      this.waiting++;
      const outcome = await this.wake(id).finally(() => this.waiting--);
      if (client.destroyed) return;
      if (!outcome.ok) {
        client.end(errorResponse("57P03", outcome.message));
        return;
      }
      await this.release(id);
      this.pipe(ctx, client, first.packet);
    } catch {
      client.destroy();
    }
  }

  private pipe(ctx: InstanceContext, client: net.Socket, startup: Buffer): void {
    const server = net.connect({ path: path.join(ctx.layout.socketDir, `.s.PGSQL.${ctx.record.port}`) });
    server.on("error", () => {
      if (!client.destroyed)
        client.end(errorResponse("57P03", "the database was started but does not accept connections yet; try again"));
    });
    server.once("connect", () => {
      this.piped++;
      server.write(startup);
      client.pipe(server);
      server.pipe(client);
    });
    client.once("close", () => server.destroy());
    server.once("close", () => client.destroy());
  }
}
