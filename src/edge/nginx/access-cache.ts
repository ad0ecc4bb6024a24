import type { IncomingMessage } from "node:http";
import type { FastifyBaseLogger } from "fastify";
import { AdminPushQueue } from "./push-queue.js";
import type { EdgeTarget } from "../../kernel/contracts.js";
import { SESSION_COOKIE } from "../../http/session-cookie.js";
import { hostName } from "../config.js";
import type { Resolved } from "../route-cache.js";
import { NginxStatic } from "./static.js";

/** the cookies a lock's decision may read: the console session and the partner lock's visitor session */
export const DECIDING_COOKIES = [SESSION_COOKIE, "platform_visitor"] as const;

export interface NginxAccessOptions {
  admin: (pathname: string, body: string) => Promise<string | null>;
  /** the route feed hears NOTIFYs now (else nothing is pushed: nothing would drop it) */
  live: () => boolean;
  /** open targets are nginx's already (plane.ts, static.ts); this holds the others */
  open: (target: EdgeTarget) => boolean;
  /** a held target, for the owner of the statistics nginx counts for it */
  known: (target: EdgeTarget) => void;
  /** static sites' materialisation (a locked site's files are served like a public one's) */
  sites: NginxStatic | null;
  log: FastifyBaseLogger;
}

/** admissions remembered as pushed, so a visitor's requests under way push once (bounded) */
const REMEMBERED = 50_000;

/**
 * Cached access decisions for locked apps and sites (README "Cached access decisions in nginx"). The Node edge
 * stays the only place that decides: when it admits a visitor from a decision it caches itself (EdgeAccess, keyed
 * by the visitor's session or visitor cookie), the admission is pushed to nginx as `host + those cookies' raw
 * values` with what is left of that decision's lifetime, and the locked target's route (replicas, or the site's
 * materialised deployment) is pushed beside it. nginx then answers that visitor's requests itself until the entry
 * expires or is dropped: on every route or access-policy NOTIFY and on every session revocation (sign-out), as the
 * Node edge's own decisions are. Refusals, redirects, sign-in pages and anything uncached stay in Node.
 */
export class NginxAccessCache {
  /** host → the value held in `edge_locked` */
  private readonly locked = new Map<string, string>();
  /** admission key → when it expires in nginx */
  private readonly admitted = new Map<string, number>();
  /** nginx may hold admissions / locked hosts (sent since the last drop; a failed call may have reached it) */
  private holding = false;
  private holdingLocked = false;
  private readonly pushes: AdminPushQueue;
  generation = 0;

  constructor(private readonly opts: NginxAccessOptions) {
    // nginx down, restarting or slow: pushed again as resolved; the next change drops whatever reached it
    this.pushes = new AdminPushQueue(
      (body) => this.opts.admin("/access", body),
      () => {
        this.locked.clear();
        this.admitted.clear();
      },
    );
  }

  /** nginx (re)started: its dicts are empty */
  restarted(): void {
    this.locked.clear();
    this.admitted.clear();
    this.holding = false;
    this.holdingLocked = false;
  }

  /** A host resolved by the Node edge: a locked app with replicas or a locked site is held for admitted visitors. */
  offer(host: string, resolved: Resolved, generation: number): void {
    const t = resolved.target;
    const app = t && !t.site && !t.idle && t.upstreams.length > 0;
    const site = t?.site?.deploymentId && NginxStatic.servable(host, t) && this.opts.sites;
    if (!t || this.opts.open(t) || (!app && !site) || /\s/.test(host)) {
      if (this.locked.delete(host)) this.send(`unlock ${host}`);
      this.opts.sites?.pin(host, null);
      return;
    }
    if (generation !== this.generation || !this.opts.live()) return;
    const hold = (value: string) => {
      if (generation !== this.generation || !this.opts.live() || this.locked.get(host) === value) return;
      this.opts.known(t);
      this.locked.set(host, value);
      this.holdingLocked = true;
      this.send(`lock ${host} ${value}`);
    };
    if (app) return hold(`a ${t.kind}:${t.id} ${t.upstreams.join(" ")}`);
    const deploymentId = t.site!.deploymentId!;
    this.opts.sites!.pin(host, deploymentId);
    void this.opts.sites!.materialise(deploymentId).then((ok) => ok && hold(`s ${NginxStatic.value(t)}`));
  }

  /**
   * The Node edge admitted a request from a decision it keeps until `expiresAt`: nginx may admit the same host
   * and cookies until then. Only for hosts held here (a host nginx does not hold would not use it).
   */
  admit(request: IncomingMessage, expiresAt: number): void {
    const host = hostName(request.headers.host ?? "");
    if (!host || !this.locked.has(host) || !this.opts.live()) return;
    const ttl = expiresAt - Date.now();
    if (ttl < 200) return;
    const key = admissionKey(host, request.headers.cookie);
    if ((this.admitted.get(key) ?? 0) >= expiresAt) return;
    if (this.admitted.size >= REMEMBERED) this.admitted.clear();
    this.admitted.set(key, expiresAt);
    this.holding = true;
    this.send(`admit ${(ttl / 1000).toFixed(3)} ${key}`);
  }

  /** Decisions may have changed (a policy, a route, a revoked session): every admission goes; routes too if asked. */
  invalidate(routes: boolean): void {
    this.generation++;
    this.admitted.clear();
    if (routes) this.opts.sites?.unpinAll();
    if (routes && this.holdingLocked) {
      this.locked.clear();
      this.send("flush");
      this.holdingLocked = false;
    } else if (this.holding) this.send("forget");
    this.holding = false;
  }

  /** resolves once every change queued so far reached nginx */
  settled(): Promise<void> {
    return this.pushes.settled();
  }

  private send(line: string): void {
    this.pushes.send(line);
  }
}

/** `<host>|<length>|<session><visitor>` from the cookies' raw values, as access-lua.ts builds it from nginx's */
export function admissionKey(host: string, cookies: string | undefined): string {
  const [session, visitor] = DECIDING_COOKIES.map((name) => rawCookie(cookies, name));
  return `${host}|${session.length}|${session}${visitor}`;
}

/** the first cookie of that name, as nginx's $cookie_<name> reads it (raw, not decoded); "" when absent */
function rawCookie(header: string | undefined, name: string): string {
  if (!header) return "";
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq >= 1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return "";
}
