/**
 * The organizations core, as its sub-areas see it (README.md, "Core and sub-areas"): the organization and its settings, the
 * membership lookup, the department tree, what a member leaves behind, the role guard's membership and the shared
 * route schemas. Every sub-area (visibility/, invites/, departments/, ...) imports from src/orgs only this file and
 * its own folder, never another sub-area's files (.dependency-cruiser.cjs, "orgs-sub-areas-meet-through-core").
 */
export { orgOf } from "./guard.js";
export { account, IdParams, Member, memberView, Org, orgView, read, Role, tags, Visibility, write } from "./schemas.js";
export {
  addMember,
  billingModeOf,
  countMembers,
  departmentChain,
  findMember,
  findOrg,
  insertOrg,
  lockAccountMembership,
  markInviteAccepted,
  pendingInviteFor,
  withdrawInvitesOf,
  membersUnder,
  memberIds,
  membership,
  updateOrg,
  VISIBILITIES,
  visibilityRank,
  withdrawInvitesTo,
  type DepartmentLink,
  type MemberRow,
  type OrgRow,
  type OrgSettings,
  type Visibility as VisibilityLevel,
} from "./repo.js";
export { removeFromOrg, type ChangeDeps } from "./membership-changes.js";
export { memberActionRefusal, type MemberAction, type MemberRefusal } from "./member-rules.js";
export { publicBaseUrl } from "./public-url.js";

// the organizations contract (contract.ts), for the sub-areas
export { roleAtLeast } from "./contract.js";
export type { ExternalHosts, OrgMembership, OrgRole, OwnedResource, OwnedResources } from "./contract.js";
export {
  departmentOfUnits,
  insertChartRows,
  insertMirrored,
  lockChart,
  mirrorRows,
  releaseDepartmentUnits,
  setMemberDepartments,
  tombstoneDepartments,
  updateChartRows,
  updateMirrored,
  type MirrorRow,
  type MirrorWrite,
} from "./chart-mirror-repo.js";
