import { ownedSource } from "../kernel/owned-repo.js";
import type { OwnedResources } from "../orgs/contract.js";
import { OWNED_DOMAINS, domainApp, domainsOfApp, moveDomains } from "./owned-repo.js";

/**
 * Custom domains for organizations (kernel.addOwned; src/orgs/README.md, "Company assets"). A domain is tied to
 * its app both ways: designating a pod, pod group or site moves its domains along, and designating a domain moves
 * its app. The edge serves a domain only while its app has the domain's owner, so the two must never part.
 * Owner columns are not watched by migration 019's triggers; a move announces the domains on domain_routes.
 */

/** the edge's target kinds (custom_domains.app_kind) as asset kinds */
const ASSET_KIND: Record<string, string> = { pod: "pod", group: "pod-group", site: "site" };
const APP_KIND = Object.fromEntries(Object.entries(ASSET_KIND).map(([k, v]) => [v, k]));

export const domainsOwned = (): OwnedResources =>
  ownedSource(OWNED_DOMAINS, moveDomains, async (q, ref) => {
    if (ref.kind === "domain") {
      const app = await domainApp(q, ref.id);
      return app && ASSET_KIND[app.app_kind] ? [{ kind: ASSET_KIND[app.app_kind], id: app.app_id }] : [];
    }
    const appKind = APP_KIND[ref.kind];
    if (!appKind) return [];
    return (await domainsOfApp(q, appKind, ref.id)).map((id) => ({ kind: "domain", id }));
  });
