import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { OutboundError, parseOutboundUrl, type Outbound } from "../net/outbound.js";

/**
 * Where a drain ships: `https://…` (batched NDJSON over the platform's guarded client; `http://` is taken as
 * webhooks take it, for receivers the operator allows, such as a test's on loopback) or syslog over TCP
 * (`syslog://host:port`, default port 514) or TLS (`syslog+tls://host:port`, default 6514, RFC 5425).
 */
export type Destination =
  { kind: "http"; url: string } | { kind: "syslog"; tls: boolean; host: string; port: number; href: string };

const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, "");

/** Parses a destination; throws OutboundError("invalid_url") with a sentence for what is none. */
export function parseDestination(raw: string): Destination {
  const text = raw.trim();
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text)?.[1]?.toLowerCase();
  if (scheme === "http" || scheme === "https") return { kind: "http", url: parseOutboundUrl(text).href };
  if (scheme !== "syslog" && scheme !== "syslog+tls")
    throw new OutboundError(
      "invalid_url",
      `${JSON.stringify(raw)} is no drain destination: use https://…, syslog+tls://host:port or syslog://host:port.`,
    );
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OutboundError("invalid_url", `${JSON.stringify(raw)} is not a URL.`);
  }
  const tls = scheme === "syslog+tls";
  if (!url.hostname) throw new OutboundError("invalid_url", "a syslog destination needs a host.");
  if (url.username || url.password || (url.pathname && url.pathname !== "/") || url.search || url.hash)
    throw new OutboundError("invalid_url", "a syslog destination is only host and port (syslog+tls://host:6514).");
  const port = url.port ? Number(url.port) : tls ? 6514 : 514;
  const host = bare(url.hostname);
  return { kind: "syslog", tls, host, port, href: `${scheme}://${url.host}${url.port ? "" : `:${port}`}` };
}

/**
 * The addresses a syslog destination may be connected to now: every address of the name is classified by the
 * platform's one address policy (OUTBOUND_ALLOW, src/net/address-policy.ts), and any refused one refuses the
 * destination (as the guarded HTTP client does), so a name cannot point one answer at a private address.
 */
export async function syslogAddresses(outbound: Outbound, host: string): Promise<string[]> {
  const addresses = isIP(host)
    ? [host]
    : await lookup(host, { all: true }).then(
        (a) => a.map((x) => x.address),
        (err: NodeJS.ErrnoException) => {
          throw new OutboundError("unreachable", `${host} could not be resolved (${err.code ?? "lookup failed"}).`);
        },
      );
  for (const address of addresses) {
    const v = outbound.policy.verdict(address);
    if (!v.allowed)
      throw new OutboundError(
        "forbidden",
        `${host} ${isIP(host) ? "is" : "resolves to"} a ${v.class.replace("_", "-")} address; the platform does not send logs there (the operator can allow it with OUTBOUND_ALLOW).`,
      );
  }
  if (!addresses.length) throw new OutboundError("unreachable", `${host} has no address.`);
  return addresses;
}

/** Checks a destination when it is saved: parsed, and its host's addresses allowed (a name not resolving passes). */
export async function checkDestination(outbound: Outbound, raw: string): Promise<Destination> {
  const d = parseDestination(raw);
  if (d.kind === "http") {
    await outbound.check(d.url);
    return d;
  }
  try {
    await syslogAddresses(outbound, d.host);
  } catch (err) {
    if (err instanceof OutboundError && err.reason === "unreachable") return d; // every connection checks again
    throw err;
  }
  return d;
}

export const destinationHref = (d: Destination): string => (d.kind === "http" ? d.url : d.href);
