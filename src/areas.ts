import type { AreaModule } from "./kernel/area.js";
import type { ACCOUNTS_ERROR_CODES } from "./accounts/errors.js";
import type { ALERTS_ERROR_CODES } from "./alerts/errors.js";
import type { ALERTS_SCOPES } from "./alerts/scopes.js";
import type { APPS_ERROR_CODES } from "./apps/errors.js";
import type { APPS_SCOPES } from "./apps/scopes.js";
import type { BILLING_ERROR_CODES } from "./billing/errors.js";
import type { BILLING_SCOPES } from "./billing/scopes.js";
import type { BUCKETS_ERROR_CODES } from "./buckets/errors.js";
import type { BUCKETS_SCOPES } from "./buckets/scopes.js";
import type { BUILDS_ERROR_CODES } from "./builds/errors.js";
import type { BUILDS_SCOPES } from "./builds/scopes.js";
import type { CLI_ERROR_CODES } from "./cli/errors.js";
import type { CRON_ERROR_CODES } from "./cron/errors.js";
import type { CRON_SCOPES } from "./cron/scopes.js";
import type { DATABASES_ERROR_CODES } from "./databases/errors.js";
import type { DATABASES_SCOPES } from "./databases/scopes.js";
import type { DOMAINS_ERROR_CODES } from "./domains/errors.js";
import type { DOMAINS_SCOPES } from "./domains/scopes.js";
import type { EVENTS_ERROR_CODES } from "./events/errors.js";
import type { EVENTS_SCOPES } from "./events/scopes.js";
import type { METRICS_ERROR_CODES } from "./metrics/errors.js";
import type { ONPREM_ERROR_CODES } from "./onprem/errors.js";
import type { ORGS_ERROR_CODES } from "./orgs/errors.js";
import type { ORGS_SCOPES } from "./orgs/scopes.js";
import type { PARTNER_ERROR_CODES } from "./partner/errors.js";
import type { PARTNER_SCOPES } from "./partner/scopes.js";
import type { PREVIEWS_ERROR_CODES } from "./previews/errors.js";
import type { PREVIEWS_SCOPES } from "./previews/scopes.js";
import type { REGISTRY_ERROR_CODES } from "./registry/errors.js";
import type { REGISTRY_SCOPES } from "./registry/scopes.js";
import type { SANDBOXES_SCOPES } from "./sandboxes/scopes.js";
import type { STATIC_ERROR_CODES } from "./static/errors.js";
import type { STATIC_SCOPES } from "./static/scopes.js";
import type { SUITE_ERROR_CODES } from "./suite/errors.js";
import { coreArea } from "./core/module.js";
import { metaArea } from "./meta/module.js";
import { accountsArea } from "./accounts/module.js";
import { cliArea } from "./cli/module.js";
import { operatorArea } from "./operator/module.js";
import { hostsArea } from "./hosts/module.js";
import { databasesArea } from "./databases/module.js";
import { appsArea } from "./apps/module.js";
import { registryArea } from "./registry/module.js";
import { sandboxesArea } from "./sandboxes/module.js";
import { staticArea } from "./static/module.js";
import { certificatesArea } from "./certificates/module.js";
import { domainsArea } from "./domains/module.js";
import { buildsArea } from "./builds/module.js";
import { edgeArea } from "./edge/module.js";
import { bucketsArea } from "./buckets/module.js";
import { billingArea } from "./billing/module.js";
import { onpremArea } from "./onprem/module.js";
import { orgsArea } from "./orgs/module.js";
import { orgVisibilityArea } from "./orgs/visibility/module.js";
import { orgInvitesArea } from "./orgs/invites/module.js";
import { orgAssetsArea } from "./orgs/assets/module.js";
import { orgDepartmentsArea } from "./orgs/departments/module.js";
import { orgRulesArea } from "./orgs/rules/module.js";
import { orgBudgetsArea } from "./orgs/budgets/module.js";
import { orgAuditArea } from "./orgs/audit/module.js";
import { orgRefreshArea } from "./orgs/refresh/module.js";
import { orgGitlabArea } from "./orgs/gitlab/module.js";
import { orgInvoicesArea } from "./orgs/invoices/module.js";
import { orgBankArea } from "./orgs/bank/module.js";
import { orgStatsArea } from "./orgs/stats/module.js";
import { orgHostsArea } from "./orgs/hosts/module.js";
import { suiteArea } from "./suite/module.js";
import { suiteSignInArea } from "./suite/sign-in/module.js";
import { suiteDirectoryArea } from "./suite/directory/module.js";
import { suiteBillingArea } from "./suite/billing/module.js";
import { partnerArea } from "./partner/module.js";
import { mcpArea } from "./mcp/module.js";
import { consoleArea } from "./console/module.js";
import { cronArea } from "./cron/module.js";
import { previewsArea } from "./previews/module.js";
import { eventsArea } from "./events/module.js";
import { metricsArea } from "./metrics/module.js";
import { alertsArea } from "./alerts/module.js";
import { drainsArea } from "./drains/module.js";

/** Every resource area of the platform, in one list: the only list that grows when an area is added. */
export const AREAS: readonly AreaModule<any, any>[] = [
  coreArea,
  metaArea,
  accountsArea,
  cliArea,
  operatorArea,
  orgsArea, // the organizations core, then its sub-areas (src/orgs/README.md)
  orgVisibilityArea,
  orgInvitesArea,
  orgAssetsArea,
  orgDepartmentsArea,
  orgRulesArea, // deploy rules admit before budgets
  orgBudgetsArea,
  orgAuditArea,
  orgRefreshArea,
  orgGitlabArea,
  orgInvoicesArea,
  orgBankArea,
  orgStatsArea,
  orgHostsArea,
  suiteArea, // the suite core, then its parts (src/suite/README.md)
  suiteSignInArea,
  suiteDirectoryArea,
  suiteBillingArea,
  partnerArea,
  hostsArea,
  databasesArea,
  registryArea,
  appsArea,
  sandboxesArea,
  staticArea,
  certificatesArea,
  domainsArea,
  buildsArea,
  cronArea, // after apps: a job may take a pod's image
  previewsArea, // after builds and apps: it uses their capabilities
  eventsArea,
  metricsArea, // after apps and the edge: reads pods and the edge's minutes through their public.ts
  alertsArea, // after metrics: reads its samples and the edge's minutes through their public.ts
  drainsArea, // log drains: reads pods through apps' public.ts, sees the edge's answers through "edgeAccessLog"
  edgeArea,
  bucketsArea,
  billingArea,
  onpremArea,
  mcpArea,
  consoleArea,
];

/*
 * The listed areas' error codes and scope resources as compile-time types, so `new ApiError("bucket_not_empty")`
 * and `scope: "buckets:write"` type-check everywhere. Each area keeps its table in its own errors.ts / scopes.ts
 * and hands it to start-up in its module (which merges them and refuses a duplicate); here its table's type is
 * named once, beside the module in the list. (Derived from the modules themselves, the types would be circular:
 * a module's hooks are typed by these very codes and resources.) An area that augments `AreaErrorTables` /
 * `AreaScopeTables` in its own file, the former pattern, still adds up with these.
 */
type ListedTables = {
  accounts: { errors: typeof ACCOUNTS_ERROR_CODES };
  alerts: { errors: typeof ALERTS_ERROR_CODES; scopes: typeof ALERTS_SCOPES };
  apps: { errors: typeof APPS_ERROR_CODES; scopes: typeof APPS_SCOPES };
  billing: { errors: typeof BILLING_ERROR_CODES; scopes: typeof BILLING_SCOPES };
  buckets: { errors: typeof BUCKETS_ERROR_CODES; scopes: typeof BUCKETS_SCOPES };
  builds: { errors: typeof BUILDS_ERROR_CODES; scopes: typeof BUILDS_SCOPES };
  cli: { errors: typeof CLI_ERROR_CODES };
  cron: { errors: typeof CRON_ERROR_CODES; scopes: typeof CRON_SCOPES };
  databases: { errors: typeof DATABASES_ERROR_CODES; scopes: typeof DATABASES_SCOPES };
  domains: { errors: typeof DOMAINS_ERROR_CODES; scopes: typeof DOMAINS_SCOPES };
  events: { errors: typeof EVENTS_ERROR_CODES; scopes: typeof EVENTS_SCOPES };
  metrics: { errors: typeof METRICS_ERROR_CODES };
  onprem: { errors: typeof ONPREM_ERROR_CODES };
  orgs: { errors: typeof ORGS_ERROR_CODES; scopes: typeof ORGS_SCOPES };
  partner: { errors: typeof PARTNER_ERROR_CODES; scopes: typeof PARTNER_SCOPES };
  previews: { errors: typeof PREVIEWS_ERROR_CODES; scopes: typeof PREVIEWS_SCOPES };
  registry: { errors: typeof REGISTRY_ERROR_CODES; scopes: typeof REGISTRY_SCOPES };
  sandboxes: { scopes: typeof SANDBOXES_SCOPES };
  static: { errors: typeof STATIC_ERROR_CODES; scopes: typeof STATIC_SCOPES };
  suite: { errors: typeof SUITE_ERROR_CODES };
};

/** the union of the listed areas' tables of one kind */
type Listed<Kind extends "errors" | "scopes"> = {
  [A in keyof ListedTables]: ListedTables[A] extends Record<Kind, infer Table> ? Table : never;
}[keyof ListedTables];

declare module "./http/errors.js" {
  interface AreaErrorTables {
    listed: Listed<"errors">;
  }
}
declare module "./auth/scopes.js" {
  interface AreaScopeTables {
    listed: Listed<"scopes">;
  }
}
