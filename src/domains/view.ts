import type { DomainsConfig } from "./config.js";
import { appHost, txtName } from "./names.js";
import type { DomainEntry } from "./service.js";

/** A custom domain as the API shows it, with the two records that verify it. */
export function domainView({ row, appExists }: DomainEntry, config: Pick<DomainsConfig, "appsDomain">) {
  return {
    id: row.id,
    domain: row.domain,
    app: { kind: row.app_kind, slug: row.app_slug },
    app_exists: appExists,
    status: row.status,
    verified_at: row.verified_at?.toISOString() ?? null,
    verified_by: row.verified_by,
    verification: {
      txt: { name: txtName(row.domain), value: row.verification_token },
      cname: { name: row.domain, value: appHost(row.app_slug, config.appsDomain) },
    },
    last_checked_at: row.last_checked_at?.toISOString() ?? null,
    last_check: row.last_check,
    created_at: row.created_at.toISOString(),
  };
}
