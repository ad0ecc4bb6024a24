import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { Agent, request } from "undici";
import { AddressPolicy, type AddressClass } from "./address-policy.js";

/**
 * The one client for requests to addresses users supply (a GitLab instance, a DNS provider's API, downloads):
 * every name is resolved (all its addresses) and refused when any address is loopback, private, link-local, cloud
 * metadata, CGNAT, unspecified, multicast or reserved, unless OUTBOUND_ALLOW names it (address-policy.ts). The
 * socket connects to the addresses that were checked (the check runs inside the connection's own lookup, so a
 * second DNS answer cannot slip another address in), redirects are returned to the caller or followed only
 * through the same check, and time and answer size are bounded. Errors say what happened, never what a refused
 * or failing server said.
 */

export type OutboundFailure = "invalid_url" | "forbidden" | "unreachable" | "timeout" | "too_large" | "redirect";

export class OutboundError extends Error {
  constructor(
    readonly reason: OutboundFailure,
    message: string,
    /** the system error code of an unreachable server (ECONNREFUSED, ENOTFOUND, ...) */
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** the whole exchange, redirects and body included */
  timeoutMs: number;
  /** larger answers are cut off with too_large; default 4 MiB */
  maxBytes?: number;
  /** 0 (default): a 3xx is returned as it is; n: up to n redirects followed, each target checked again */
  followRedirects?: number;
}

export interface OutboundResponse {
  status: number;
  /** the URL that answered (after redirects) */
  url: string;
  header(name: string): string | null;
  /** the answer as UTF-8 text */
  body: string;
  bytes: Buffer;
}

const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** only these go along to another origin on a redirect: credentials never do */
const PORTABLE_HEADERS = new Set(["accept", "accept-language", "user-agent"]);

const article = (cls: AddressClass) => (/^[aeiou]/.test(cls) ? "an" : "a");
const describe = (cls: AddressClass) => cls.replace("_", "-");

function forbidden(host: string, cls: AddressClass, literal: boolean): OutboundError {
  const what = `${article(cls)} ${describe(cls)} address`;
  return new OutboundError(
    "forbidden",
    `${host} ${literal ? "is" : "resolves to"} ${what}; the platform does not send requests there (the operator can allow it with OUTBOUND_ALLOW).`,
  );
}

/**
 * An http(s) URL without credentials or a fragment, as the WHATWG parser normalizes it (so `http://2130706433/`
 * is seen as the 127.0.0.1 it is). `#` alone counts as a fragment.
 */
export function parseOutboundUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new OutboundError("invalid_url", `${JSON.stringify(raw)} is not a URL.`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new OutboundError("invalid_url", `the URL must be http or https, not ${url.protocol}.`);
  if (url.username || url.password) throw new OutboundError("invalid_url", "the URL must not carry credentials.");
  if (url.hash || raw.includes("#")) throw new OutboundError("invalid_url", "the URL must not carry a fragment (#).");
  return url;
}

const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, "");

export class Outbound {
  private readonly agent: Agent;

  constructor(readonly policy: AddressPolicy) {
    this.agent = new Agent({ connect: { lookup: this.checkedLookup } });
  }

  static fromEnv(env: Record<string, string | undefined>): Outbound {
    return new Outbound(AddressPolicy.fromEnv(env));
  }

  /** The connection's own DNS lookup: every address is checked and only checked addresses are connected to. */
  private readonly checkedLookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family, hints: options.hints }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const refused = addresses.map((a) => this.policy.verdict(a.address)).find((v) => !v.allowed);
      if (refused) return callback(forbidden(hostname, refused.class, false) as never, "", 0);
      if (!addresses.length) return callback(Object.assign(new Error("no address"), { code: "ENOTFOUND" }), "", 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };

  /** An IP literal never reaches the lookup: it is checked here, before any socket. */
  private checkLiteral(url: URL): void {
    const host = bare(url.hostname);
    if (!isIP(host)) return;
    const v = this.policy.verdict(host);
    if (!v.allowed) throw forbidden(host, v.class, true);
  }

  /**
   * Whether the URL's host may be called now, without calling it (a settings form saving an address): a name is
   * resolved; one that does not resolve passes, since every request checks again.
   */
  async check(raw: string): Promise<URL> {
    const url = parseOutboundUrl(raw);
    this.checkLiteral(url);
    const host = bare(url.hostname);
    if (isIP(host)) return url;
    const addresses = await new Promise<LookupAddress[]>((resolve) =>
      dnsLookup(host, { all: true }, (err, a) => resolve(err ? [] : a)),
    );
    const refused = addresses.map((a) => this.policy.verdict(a.address)).find((v) => !v.allowed);
    if (refused) throw forbidden(host, refused.class, false);
    return url;
  }

  async request(raw: string, req: OutboundRequest): Promise<OutboundResponse> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, req.timeoutMs);
    try {
      let url = parseOutboundUrl(raw);
      let method = req.method ?? "GET";
      let body = req.body;
      let headers = req.headers ?? {};
      for (let hop = 0; ; hop++) {
        this.checkLiteral(url);
        const res = await this.send(url, method, headers, body, controller.signal, () => timedOut, req);
        const location = res.header("location");
        if (!REDIRECTS.has(res.status) || !location || !req.followRedirects) return res;
        if (hop >= req.followRedirects)
          throw new OutboundError("redirect", `more than ${req.followRedirects} redirects from ${url.origin}.`);
        let next: URL;
        try {
          next = parseOutboundUrl(new URL(location, url).toString().replace(/#.*$/, ""));
        } catch (err) {
          if (err instanceof OutboundError)
            throw new OutboundError("redirect", `${url.origin} redirected to an unusable address: ${err.message}`);
          throw err;
        }
        if (next.origin !== url.origin)
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => PORTABLE_HEADERS.has(k.toLowerCase())));
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
          method = "GET";
          body = undefined;
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== "content-type"));
        }
        url = next;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  private async send(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal,
    timedOut: () => boolean,
    req: OutboundRequest,
  ): Promise<OutboundResponse> {
    const failed = (err: unknown): OutboundError => {
      if (err instanceof OutboundError) return err;
      if (timedOut()) return new OutboundError("timeout", `${url.host} did not answer within ${req.timeoutMs} ms.`);
      const e = err as { code?: string; cause?: { code?: string } };
      const code = e.code ?? e.cause?.code ?? null;
      const known = code && /^E[A-Z_]+$/.test(code) ? code : null;
      return new OutboundError(
        "unreachable",
        `${url.host} could not be reached (${known ?? "connection failed"}).`,
        known,
      );
    };
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, { method: method as "GET", headers, body, signal, dispatcher: this.agent });
    } catch (err) {
      throw failed(err);
    }
    const max = req.maxBytes ?? DEFAULT_MAX_BYTES;
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > max) {
          res.body.destroy();
          throw new OutboundError("too_large", `${url.host} answered with more than ${max} bytes.`);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      throw failed(err);
    }
    const raw = res.headers;
    const bytes = Buffer.concat(chunks);
    return {
      status: res.statusCode,
      url: url.toString(),
      header: (name) => {
        const v = raw[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
      },
      body: bytes.toString("utf8"),
      bytes,
    };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

const shared = new WeakMap<object, Outbound>();

/** The platform's one guarded client for a configuration (areas wired from the same env share its connections). */
export function outboundFor(env: Record<string, string | undefined>): Outbound {
  let o = shared.get(env);
  if (!o) shared.set(env, (o = Outbound.fromEnv(env)));
  return o;
}
