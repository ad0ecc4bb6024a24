import type { AreaModule } from "./kernel/area.js";
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
  edgeArea,
  bucketsArea,
  billingArea,
  onpremArea,
  mcpArea,
  consoleArea,
];
