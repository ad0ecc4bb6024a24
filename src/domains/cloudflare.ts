import { ApiError } from "../http/errors.js";
import { OutboundError, type Outbound } from "../net/outbound.js";
import { parents } from "./names.js";

/** Cloudflare's response envelope (API v4): every answer, success or not. */
interface Envelope<T> {
  success: boolean;
  errors: { code: number; message: string }[];
  messages: unknown[];
  result: T;
  result_info?: unknown;
}

interface Zone {
  id: string;
  name: string;
}

export interface DnsRecord {
  id: string;
  type: string;
  name: string;
  content: string;
  proxied?: boolean;
}

/** What cf-autosetup did to one record. */
export interface RecordChange {
  id: string;
  type: string;
  name: string;
  content: string;
  proxied: boolean;
  action: "created" | "updated" | "unchanged";
}

/** Cloudflare error codes about the credentials (bad header, invalid or expired token, authentication error). */
const TOKEN_ERRORS = new Set([6003, 6100, 6101, 6102, 6103, 6111, 9106, 9109, 10000, 10001]);

const TOKEN = /^[A-Za-z0-9._~+/=-]{1,512}$/;

/** a page of zones or records is a few kilobytes; more is not Cloudflare */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * The part of Cloudflare's DNS API cf-autosetup needs (zones by name, DNS records of a zone), at
 * CLOUDFLARE_API_BASE with the user's API token as `Authorization: Bearer`. The token lives only in this call:
 * never stored, never logged, never in an error message. Requests go through the guarded outbound client
 * (src/net/outbound.ts), redirects are not followed. Cloudflare refusing the token is 400 invalid_request; any
 * other Cloudflare failure 502 provider_error with Cloudflare's own codes and messages (the operator's public
 * Cloudflare API, which the caller reaches as well; no address of the caller's choosing).
 */
export class CloudflareClient {
  constructor(
    private readonly base: string,
    private readonly timeoutMs: number,
    private readonly outbound: Outbound,
  ) {}

  private async call<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
    let res;
    try {
      res = await this.outbound.request(`${this.base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        timeoutMs: this.timeoutMs,
        maxBytes: MAX_ANSWER_BYTES,
      });
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      const why =
        err.reason === "timeout"
          ? `Cloudflare did not answer within ${this.timeoutMs} ms.`
          : err.reason === "forbidden"
            ? `Cloudflare could not be reached: CLOUDFLARE_API_BASE ${err.message}`
            : "Cloudflare could not be reached.";
      throw new ApiError("provider_error", why);
    }
    let envelope: Envelope<T> | null = null;
    try {
      envelope = JSON.parse(res.body) as Envelope<T>;
    } catch {
      // not JSON: reported by status below
    }
    const ok = res.status >= 200 && res.status < 300;
    if (ok && envelope?.success) return envelope.result;
    const said = (Array.isArray(envelope?.errors) ? envelope.errors : [])
      .map((e) => `${e.code} ${String(e.message).slice(0, 300)}`)
      .join("; ")
      .slice(0, 1000);
    const detail = said ? `: ${said}` : ` (HTTP ${res.status})`;
    if (res.status === 401 || res.status === 403 || envelope?.errors?.some?.((e) => TOKEN_ERRORS.has(e.code)))
      throw new ApiError("invalid_request", `api_token: Cloudflare refused the token${detail}.`);
    throw new ApiError("provider_error", `Cloudflare refused ${method} ${path.split("?")[0]}${detail}.`);
  }

  /** The zone holding the domain, asked from the domain up (www.shop.example.com, shop.example.com, example.com). */
  async findZone(token: string, domain: string): Promise<Zone> {
    if (!TOKEN.test(token)) throw new ApiError("invalid_request", "api_token: not a Cloudflare API token.");
    for (const name of parents(domain)) {
      const zones = await this.call<Zone[]>(token, "GET", `/zones?name=${encodeURIComponent(name)}`);
      const zone = Array.isArray(zones) ? zones.find((z) => z.name?.toLowerCase() === name) : undefined;
      if (zone) return { id: zone.id, name };
    }
    throw new ApiError(
      "invalid_request",
      `api_token: no Cloudflare zone holding ${domain} is visible to this token (it needs Zone:Read and DNS:Edit on the zone).`,
    );
  }

  /** Makes `name` hold exactly one record of `type` with `content`: updates the first existing one, else creates it. */
  async upsert(
    token: string,
    zone: Zone,
    record: { type: "TXT" | "CNAME"; name: string; content: string; proxied?: boolean },
  ): Promise<RecordChange> {
    const z = encodeURIComponent(zone.id);
    const query = `type=${record.type}&name=${encodeURIComponent(record.name)}`;
    const existing = await this.call<DnsRecord[]>(token, "GET", `/zones/${z}/dns_records?${query}`);
    const body = { type: record.type, name: record.name, content: record.content, ttl: 1, proxied: record.proxied };
    const current = Array.isArray(existing) ? existing[0] : undefined;
    const same = (r: DnsRecord) =>
      sameContent(r, record.content) && (record.proxied === undefined || !!r.proxied === record.proxied);
    if (current && same(current)) return change(current, "unchanged");
    const saved = current
      ? await this.call<DnsRecord>(token, "PATCH", `/zones/${z}/dns_records/${encodeURIComponent(current.id)}`, body)
      : await this.call<DnsRecord>(token, "POST", `/zones/${z}/dns_records`, body);
    return change(saved, current ? "updated" : "created");
  }
}

/** Cloudflare may show TXT content quoted ("value"), and CNAME content with a trailing dot. */
function sameContent(r: DnsRecord, content: string): boolean {
  const shown = String(r.content ?? "")
    .replace(/^"(.*)"$/, "$1")
    .replace(/\.$/, "")
    .toLowerCase();
  return shown === content.toLowerCase();
}

function change(r: DnsRecord, action: RecordChange["action"]): RecordChange {
  return {
    id: String(r.id),
    type: String(r.type),
    name: String(r.name),
    content: String(r.content),
    proxied: !!r.proxied,
    action,
  };
}
