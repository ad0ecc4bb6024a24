import { defineArea, rowLookup } from "../kernel/area.js";
import type { EdgeHostSource } from "../edge/contract.js";
import type { Kernel } from "../kernel/kernel.js";
import { outboundFor } from "../net/outbound.js";
import { CloudflareClient } from "./cloudflare.js";
import { domainsConfig, type DomainsConfig } from "./config.js";
import { DnsLookup } from "./dns.js";
import { domainsOwned } from "./owned.js";
import * as repo from "./repo.js";
import { domainRoutes } from "./routes.js";
import { appOf, domainsService, type DomainsState } from "./service.js";
import { DOMAINS_ERROR_CODES } from "./errors.js";
import { DOMAINS_SCOPES } from "./scopes.js";

export type { DomainsState } from "./service.js";

/**
 * What the edge serves of custom domains: a verified domain answers its app's slug, while that slug names an app
 * of the domain's owner (a deleted app's slug taken by another owner never gets the domain's traffic). Changes are
 * announced on NOTIFY domain_routes (migration 019's triggers).
 */
export function domainEdgeHosts(kernel: Pick<Kernel, "all">): EdgeHostSource {
  return {
    channel: "domain_routes",
    appSlug: async (q, host) => {
      const row = await repo.holderOf(q, host, true);
      if (!row) return null;
      const app = await appOf(kernel, q, { kind: row.owner_kind, id: row.owner_id }, row.app_slug);
      return app ? row.app_slug : null;
    },
  };
}

/** Custom domains (issue 11; README.md here): add, verify by DNS, detect the DNS provider, Cloudflare autosetup. */
export const domainsArea = defineArea<DomainsState, DomainsConfig>({
  name: "domains",
  errors: DOMAINS_ERROR_CODES,
  scopes: DOMAINS_SCOPES,
  tags: [
    {
      name: "domains",
      description:
        "Custom domains for apps (pods, pod groups, static sites): DNS verification, DNS provider detection, Cloudflare autosetup.",
    },
  ],
  config: domainsConfig,
  setup: (p, config) => {
    p.kernel.contribute("edgeHosts", domainEdgeHosts(p.kernel));
    // a custom domain keeps its app's owner when either moves (organizations' company assets)
    p.kernel.contribute("owned", domainsOwned(), "domain");
    // a certificate that cannot be issued for a verified domain is an event for the domain's owner
    p.kernel.use("certificates")?.onIssuanceFailed((q, f) => repo.recordCertificateFailure(q, f));
    const service = domainsService({
      db: p.db,
      kernel: p.kernel,
      config,
      dns: new DnsLookup(config.dnsServers, config.dnsTimeoutMs),
      cloudflare: new CloudflareClient(config.cloudflareApiBase, config.cloudflareTimeoutMs, outboundFor(p.env)),
    });
    return { service, config };
  },
  routes: (_app, _ctx, state) => domainRoutes(state),
  instances: (p) =>
    rowLookup(
      "domains",
      (owner, ref) => repo.findDomain(p.db, owner, ref),
      (row) => row.domain,
    ),
});
