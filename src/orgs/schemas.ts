import { Type } from "@sinclair/typebox";
import type { AuthRule } from "../http/auth-rule.js";
import { Nullable } from "../http/schemas.js";
import { VISIBILITIES, type MemberRow, type OrgRow } from "./repo.js";
import type { OrgRole } from "./contract.js";

export const tags = ["org"];
export const read: AuthRule = { scope: "org:read" };
export const write: AuthRule = { scope: "org:write" };
export const account: AuthRule = { account: true };

export const Visibility = Type.Union(
  VISIBILITIES.map((v) => Type.Literal(v)),
  { description: "private < invited < department < company < public" },
);
export const Role = Type.Union([Type.Literal("owner"), Type.Literal("admin"), Type.Literal("member")]);
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export const Org = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: Role,
  owner_account_id: Type.String(),
  member_count: Type.Integer(),
  default_visibility: Visibility,
  max_visibility: Visibility,
  shared_approval: Type.Boolean(),
  billing_mode: Type.String({
    description: "personal (members pay their company assets), prepaid (the organization's wallet), card, suite",
  }),
  image_refresh_policy: Type.String(),
  image_refresh_keep_days: Type.Integer(),
  members_manage_all_assets: Type.Boolean({
    description:
      "whether every member changes and deletes every company asset; false: members only those they are responsible for (admins and the owner all)",
  }),
  created_at: Type.String(),
});

export const orgView = (r: { org: OrgRow; role: OrgRole; memberCount: number }) => ({
  id: r.org.id,
  name: r.org.name,
  role: r.role,
  owner_account_id: r.org.owner_account_id,
  member_count: r.memberCount,
  default_visibility: r.org.default_visibility,
  max_visibility: r.org.max_visibility,
  shared_approval: r.org.shared_approval,
  billing_mode: r.org.billing_mode,
  image_refresh_policy: r.org.image_refresh_policy,
  image_refresh_keep_days: r.org.image_refresh_keep_days,
  members_manage_all_assets: r.org.members_manage_all_assets,
  created_at: r.org.created_at.toISOString(),
});

export const Member = Type.Object({
  id: Type.String({ description: "the member's account id" }),
  email: Type.String(),
  display_name: Nullable(Type.String()),
  role: Role,
  department_id: Nullable(Type.String()),
  department_code: Nullable(Type.String()),
  department_name: Nullable(Type.String()),
  joined_at: Type.String(),
});

export const memberView = (m: MemberRow) => ({
  id: m.account_id,
  email: m.email,
  display_name: m.display_name,
  role: m.role,
  department_id: m.department_id,
  department_code: m.department_code,
  department_name: m.department_name,
  joined_at: m.joined_at.toISOString(),
});
