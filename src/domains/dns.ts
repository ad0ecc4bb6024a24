import { promises as dnsPromises } from "node:dns";
import { parents } from "./names.js";

/** Why a DNS question got no answer: the name has no such record, nobody answered in time, or the server failed. */
export type LookupError = "no_record" | "timeout" | "unreachable" | "failed";
export type Lookup<T> = { ok: true; values: T } | { ok: false; error: LookupError };

function classify(err: unknown): LookupError {
  const code = (err as { code?: string }).code;
  if (code === "ENODATA" || code === "ENOTFOUND") return "no_record";
  if (code === "ETIMEOUT" || code === "ECANCELLED") return "timeout";
  if (code === "ECONNREFUSED") return "unreachable";
  return "failed";
}

const host = (name: string): string => name.toLowerCase().replace(/\.$/, "");

/**
 * DNS questions for verification and provider detection, on the configured servers (DNS_SERVERS) or the system's.
 * Every question is bounded (DNS_TIMEOUT_MS, one try) and never throws: a timeout or a failing server is an answer
 * ({ok:false}) the caller reports, never a 500.
 */
export class DnsLookup {
  constructor(
    private readonly servers: string[],
    private readonly timeoutMs: number,
  ) {}

  private async ask<T>(question: (r: dnsPromises.Resolver) => Promise<T>): Promise<Lookup<T>> {
    const resolver = new dnsPromises.Resolver({ timeout: this.timeoutMs, tries: 1 });
    if (this.servers.length) resolver.setServers(this.servers);
    let timer: NodeJS.Timeout | undefined;
    // the resolver's own timeout is per server and try; this bounds the whole question
    const deadline = new Promise<Lookup<T>>((resolve) => {
      timer = setTimeout(() => {
        resolver.cancel();
        resolve({ ok: false, error: "timeout" });
      }, this.timeoutMs + 250);
    });
    try {
      return await Promise.race([question(resolver).then((values): Lookup<T> => ({ ok: true, values })), deadline]);
    } catch (err) {
      return { ok: false, error: classify(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** TXT records of name, each record's strings joined (as a long value split in 255-byte strings is meant) */
  async txt(name: string): Promise<Lookup<string[]>> {
    const r = await this.ask((resolver) => resolver.resolveTxt(name));
    return r.ok ? { ok: true, values: r.values.map((chunks) => chunks.join("")) } : r;
  }

  /** CNAME targets of name, lower case without the trailing dot */
  async cname(name: string): Promise<Lookup<string[]>> {
    const r = await this.ask((resolver) => resolver.resolveCname(name));
    return r.ok ? { ok: true, values: r.values.map(host) } : r;
  }

  async ns(name: string): Promise<Lookup<string[]>> {
    const r = await this.ask((resolver) => resolver.resolveNs(name));
    return r.ok ? { ok: true, values: r.values.map(host) } : r;
  }
}

/** NS host names → the DNS provider they belong to (first match wins). */
const PROVIDERS: [RegExp, string][] = [
  [/\.cloudflare\.com$/, "cloudflare"],
  [/\.awsdns-\d+\.(com|net|org|co\.uk)$/, "route53"],
  [/\.googledomains\.com$/, "google"],
  [/(^|\.)gabia\.(com|co\.kr|net)$/, "gabia"],
  [/\.registrar-servers\.com$/, "namecheap"],
  [/\.domaincontrol\.com$/, "godaddy"],
  [/\.azure-dns\.(com|net|org|info)$/, "azure"],
  [/\.digitalocean\.com$/, "digitalocean"],
  [/\.vercel-dns\.com$/, "vercel"],
  [/\.netlify\.(com|app)$/, "netlify"],
  // NS1 (Netlify DNS is hosted there: dns1.p01.nsone.net)
  [/\.nsone\.net$/, "ns1"],
  [/(^|\.)cafe24\.com$/, "cafe24"],
  [/(^|\.)hosting\.co\.kr$/, "hosting.kr"],
  [/\.hetzner\.(com|de)$/, "hetzner"],
  [/\.ovh\.net$/, "ovh"],
];

/** Providers whose DNS records the platform can write with the user's API token (cf-autosetup). */
export const AUTOSETUP = new Set(["cloudflare"]);

export function providerOf(nameservers: string[]): string {
  for (const ns of nameservers) for (const [pattern, provider] of PROVIDERS) if (pattern.test(ns)) return provider;
  return "unknown";
}

export interface ProviderGuess {
  provider: string;
  /** the name whose NS records answered (the zone apex, usually the registrable domain); null when none did */
  zone: string | null;
  nameservers: string[];
  autosetup_supported: boolean;
  /** why nothing answered (timeout, failed), or null */
  problem: LookupError | null;
}

/** Walks up from the domain until a name has NS records (www.shop.example.com, shop.example.com, example.com). */
export async function detectProvider(dns: DnsLookup, domain: string): Promise<ProviderGuess> {
  let problem: LookupError | null = null;
  for (const name of parents(domain)) {
    const r = await dns.ns(name);
    if (r.ok && r.values.length) {
      const provider = providerOf(r.values);
      const nameservers = [...r.values].sort();
      return { provider, zone: name, nameservers, autosetup_supported: AUTOSETUP.has(provider), problem: null };
    }
    if (!r.ok && r.error !== "no_record") {
      problem = r.error;
      // a server that does not answer will not answer the parent either
      if (r.error === "timeout" || r.error === "unreachable") break;
    }
  }
  return { provider: "unknown", zone: null, nameservers: [], autosetup_supported: false, problem };
}
