import { Type } from "@sinclair/typebox";
import { Nullable } from "../../http/schemas.js";
import { Visibility, type VisibilityLevel as V } from "../public.js";
import type { ApprovalRow, DepartmentBlockRow, GrantRow } from "./repo.js";
import type { SiteAccess } from "./service.js";
import type { CompanySite, VisibilitySource } from "./sites.js";

/** Where the visibility in force comes from (the static area's site view shows the same two fields). */
const visibilityFields = {
  visibility_source: Type.Union(
    ["site", "organization_default", "organization_maximum"].map((s) => Type.Literal(s)),
    {
      description:
        "site: its own setting; organization_default: it has none; organization_maximum: its own or the default is wider than max_visibility, which applies. site_visibility is its own setting (null: none)",
    },
  ),
  site_visibility: Type.Union([Visibility, Type.Null()]),
};

export const SlugParams = Type.Object({ slug: Type.String({ pattern: "^[a-z0-9][a-z0-9-]{0,62}$" }) });
export const GrantParams = Type.Object({
  slug: Type.String({ pattern: "^[a-z0-9][a-z0-9-]{0,62}$" }),
  uid: Type.String({ minLength: 1, maxLength: 100, description: "the granted member's account id" }),
});

export const Grant = Type.Object({
  account_id: Type.String(),
  email: Type.String(),
  granted_by: Type.String(),
  created_at: Type.String(),
});

export const grantView = (g: GrantRow) => ({
  account_id: g.account_id,
  email: g.email,
  granted_by: g.granted_by,
  created_at: g.created_at.toISOString(),
});

export const Approval = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  kind: Type.String({ description: "site, pod or group" }),
  app_id: Type.String(),
  requested_by: Type.String(),
  requested_by_email: Nullable(Type.String()),
  from_visibility: Visibility,
  to_visibility: Visibility,
  department_id: Nullable(Type.String({ description: "whose approver decides; null: the admins" })),
  status: Type.String({ description: "pending, approved, rejected or superseded" }),
  decided_by: Nullable(Type.String()),
  decided_at: Nullable(Type.String()),
  note: Nullable(Type.String()),
  created_at: Type.String(),
});

export const approvalView = (a: ApprovalRow) => ({
  id: a.id,
  slug: a.slug,
  kind: a.app_kind,
  app_id: a.app_id,
  requested_by: a.requested_by,
  requested_by_email: a.requested_by_email,
  from_visibility: a.from_visibility,
  to_visibility: a.to_visibility,
  department_id: a.department_id,
  status: a.status,
  decided_by: a.decided_by,
  decided_at: a.decided_at?.toISOString() ?? null,
  note: a.note,
  created_at: a.created_at.toISOString(),
});

const siteFields = {
  slug: Type.String(),
  kind: Type.String({ description: "site (static), pod or group" }),
  id: Type.String(),
  responsible_account_id: Nullable(Type.String()),
  visibility: Visibility,
  inherited: Type.Boolean({ description: "no visibility of its own: the organization's default_visibility applies" }),
  ...visibilityFields,
};

export const Access = Type.Object({
  ...siteFields,
  status: Type.Literal("applied"),
  max_visibility: Visibility,
  shared_approval: Type.Boolean(),
  grants: Type.Array(Grant),
  pending_approvals: Type.Array(Approval),
});

export const accessView = (a: SiteAccess) => ({
  slug: a.site.slug,
  kind: a.site.kind,
  id: a.site.id,
  responsible_account_id: a.site.creator,
  visibility: a.visibility,
  inherited: a.inherited,
  visibility_source: a.source,
  site_visibility: a.own,
  status: "applied" as const,
  max_visibility: a.org.max_visibility,
  shared_approval: a.org.shared_approval,
  grants: a.grants.map(grantView),
  pending_approvals: a.pending.map(approvalView),
});

export const Pending = Type.Object({
  status: Type.Literal("pending"),
  approval_id: Type.String(),
  approval: Approval,
});

export const DeployControl = Type.Object({
  policy: Type.Object({
    default_visibility: Visibility,
    max_visibility: Visibility,
    shared_approval: Type.Boolean({ description: "a non-admin's widening waits for an approver" }),
    deploy_permission: Type.String({
      description: "members: every member deploys company assets, except in blocked departments",
    }),
    deploy_rules_set: Type.Boolean({ description: "deploy guardrails are configured (GET /v1/org/deploy-rules)" }),
  }),
  departments: Type.Array(
    Type.Object({
      id: Type.String(),
      code: Type.String(),
      name: Type.String(),
      parent_id: Nullable(Type.String()),
      deploy_blocked: Type.Boolean(),
      blocked: Type.Boolean({ description: "blocked itself or through a parent department" }),
    }),
  ),
  sites: Type.Array(Type.Object({ ...siteFields, name: Nullable(Type.String()) })),
});

export const deployControlView = (c: {
  org: { default_visibility: V; max_visibility: V; shared_approval: boolean };
  deployRulesSet: boolean;
  departments: DepartmentBlockRow[];
  sites: { site: CompanySite; visibility: V; inherited: boolean; source: VisibilitySource; own: V | null }[];
}) => ({
  policy: {
    default_visibility: c.org.default_visibility,
    max_visibility: c.org.max_visibility,
    shared_approval: c.org.shared_approval,
    deploy_permission: "members",
    deploy_rules_set: c.deployRulesSet,
  },
  departments: c.departments.map((dep) => ({
    id: dep.id,
    code: dep.code,
    name: dep.name,
    parent_id: dep.parent_id,
    deploy_blocked: dep.deploy_blocked,
    blocked: dep.blocked,
  })),
  sites: c.sites.map((s) => ({
    slug: s.site.slug,
    kind: s.site.kind,
    id: s.site.id,
    name: s.site.name,
    responsible_account_id: s.site.creator,
    visibility: s.visibility,
    inherited: s.inherited,
    visibility_source: s.source,
    site_visibility: s.own,
  })),
});

export const Applied = Type.Object({
  visibility: Visibility,
  only_wider: Type.Boolean(),
  changed: Type.Integer(),
  unchanged: Type.Integer(),
});
