import { Type } from "@sinclair/typebox";
import { Nullable } from "../../http/schemas.js";
import type { InviteRow } from "./repo.js";
import { isExpired, type InviteResult } from "./service.js";

export const InviteRole = Type.Union([Type.Literal("admin"), Type.Literal("member")], {
  description: "admin invitations are the owner's",
});
const Email = Type.String({ format: "email", maxLength: 254 });
const DepartmentFields = {
  department_id: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  department_code: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100 }))),
};

export const InviteItem = Type.Object(
  { email: Email, role: Type.Optional(InviteRole), ...DepartmentFields },
  { additionalProperties: false },
);

export const InviteBody = Type.Object(
  {
    invites: Type.Optional(
      Type.Array(InviteItem, {
        minItems: 1,
        maxItems: 50,
        description: "one entry per address, each with its role (default member) and department",
      }),
    ),
    emails: Type.Optional(
      Type.Array(Email, { minItems: 1, maxItems: 50, description: "shorthand: these addresses, all with `role`" }),
    ),
    role: Type.Optional(InviteRole),
    ...DepartmentFields,
  },
  { additionalProperties: false, description: "either invites[] or emails[] (+ role, department), 1-50 addresses" },
);

export const Invite = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: InviteRole,
  department_id: Nullable(Type.String()),
  department_code: Nullable(Type.String()),
  department_name: Nullable(Type.String()),
  invited_by: Type.Object({ id: Type.String(), email: Type.String(), display_name: Nullable(Type.String()) }),
  status: Type.Union([Type.Literal("pending"), Type.Literal("accepted"), Type.Literal("withdrawn")]),
  expired: Type.Boolean({ description: "pending but past expires_at: no longer accepted (inviting again renews it)" }),
  created_at: Type.String(),
  expires_at: Type.String(),
});

export const inviteView = (r: InviteRow) => ({
  id: r.id,
  email: r.email,
  role: r.role,
  department_id: r.department_id,
  department_code: r.department_code,
  department_name: r.department_name,
  invited_by: { id: r.invited_by, email: r.inviter_email, display_name: r.inviter_name },
  status: r.status,
  expired: isExpired(r),
  created_at: r.created_at.toISOString(),
  expires_at: r.expires_at.toISOString(),
});

export const InviteOutcome = Type.Object({
  email: Type.String(),
  result: Type.Union(
    [Type.Literal("invited"), Type.Literal("renewed"), Type.Literal("skipped"), Type.Literal("failed")],
    {
      description:
        "invited; renewed (a pending invitation got a new link, role and expiry); skipped (already a member, or listed twice); failed (the mail could not be sent)",
    },
  ),
  reason: Nullable(Type.String()),
  invite: Nullable(Invite),
  link: Type.Optional(
    Type.String({ description: "only when the platform sends no mail (SMTP_URL unset): hand it to the invitee" }),
  ),
});

export const outcomeView = (r: InviteResult) => ({
  email: r.email,
  result: r.result,
  reason: r.reason,
  invite: r.invite ? inviteView(r.invite) : null,
  ...(r.link ? { link: r.link } : {}),
});

export const Preview = Type.Object({
  org_name: Type.String(),
  inviter: Type.String(),
  email: Type.String({ description: "the invited address, masked (a***@example.com)" }),
  role: InviteRole,
  department_name: Nullable(Type.String()),
  status: Type.Union([
    Type.Literal("pending"),
    Type.Literal("expired"),
    Type.Literal("accepted"),
    Type.Literal("withdrawn"),
  ]),
  expires_at: Type.String(),
});
