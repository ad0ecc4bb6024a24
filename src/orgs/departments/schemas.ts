import { Type } from "@sinclair/typebox";
import { Body, Nullable } from "../../http/schemas.js";
import {
  CODE_PATTERN,
  EMAIL_PATTERN,
  MAX_CODE,
  MAX_CSV_CHARS,
  MAX_DEPARTMENTS,
  MAX_MEMBERS,
  MAX_NAME,
} from "./limits.js";
import type { DepartmentState } from "./service.js";

export const Code = Type.String({
  minLength: 1,
  maxLength: MAX_CODE,
  pattern: CODE_PATTERN,
  description: "the department's code in the HR system (unique in the organization)",
});
const Name = Type.String({ minLength: 1, maxLength: MAX_NAME });
const Email = Type.String({ minLength: 3, maxLength: 254, pattern: EMAIL_PATTERN });

export const CodeParams = Type.Object({ code: Code });
/**
 * DELETE and deploy-policy name a department by code or id (the spec's `{id}`); one parameter name for the three
 * paths, which OpenAPI requires of paths that differ only by it. An id wins over a code spelled like it.
 */
export const RefParams = Type.Object({
  code: Type.String({ minLength: 1, maxLength: MAX_CODE, description: "the department's code, or its id" }),
});

export const DepartmentFields = {
  name: Name,
  parent_code: Type.Optional(Nullable(Code)),
  approver_email: Type.Optional(
    Nullable({ ...Email, description: "who approves the department's sharing requests (stored lower-case)" }),
  ),
};

export const DepartmentsSyncBody = Body({
  departments: Type.Array(Body({ code: Code, ...DepartmentFields }), {
    maxItems: MAX_DEPARTMENTS,
    description: `The whole chart (or, without implicit_deletion, part of it), in any order; at most ${MAX_DEPARTMENTS}. Omitted parent_code or approver_email: none.`,
  }),
  implicit_deletion: Type.Optional(
    Type.Boolean({ default: false, description: "delete the departments that are not in the list" }),
  ),
});

export const MembersSyncBody = Body({
  members: Type.Array(
    Body({
      email: Email,
      department_code: Type.Optional(
        Nullable({ ...Code, description: "null: no department; omitted: unchanged; unknown: the item's error" }),
      ),
      role: Type.Optional(
        Type.Union([Type.Literal("admin"), Type.Literal("member")], { description: "omitted: unchanged" }),
      ),
    }),
    { maxItems: MAX_MEMBERS, description: `Members by e-mail; at most ${MAX_MEMBERS}.` },
  ),
  implicit_deletion: Type.Optional(
    Type.Boolean({
      default: false,
      description: "remove from the organization the members not in the list (never the owner nor the caller)",
    }),
  ),
});

/** A CSV as the raw body (text/csv) or as {"csv": "..."} (application/json). */
export const csvBody = (columns: string) => ({
  content: {
    "text/csv": {
      schema: {
        type: "string",
        maxLength: MAX_CSV_CHARS,
        description: `CSV with the header row ${columns}.`,
      },
    },
    "application/json": {
      schema: Body({
        csv: Type.String({ maxLength: MAX_CSV_CHARS, description: `CSV with the header row ${columns}.` }),
      }),
    },
  },
});

export const Department = Type.Object({
  id: Type.String(),
  code: Type.String(),
  name: Type.String(),
  parent_id: Nullable(Type.String()),
  parent_code: Nullable(Type.String()),
  approver_email: Nullable(Type.String()),
  deploy_blocked: Type.Boolean({ description: "the department's own deploy block" }),
  effective_deploy_blocked: Type.Boolean({
    description: "blocked by its own deploy block or an ancestor's (sub-departments inherit it)",
  }),
  deploy_blocked_by: Nullable(
    Type.String({ description: "the code of the department whose block applies: itself or its nearest ancestor" }),
  ),
  member_count: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const departmentView = (d: DepartmentState) => ({
  id: d.id,
  code: d.code,
  name: d.name,
  parent_id: d.parent_id,
  parent_code: d.parent_code,
  approver_email: d.approver_email,
  deploy_blocked: d.deploy_blocked,
  effective_deploy_blocked: d.blocked_by !== null,
  deploy_blocked_by: d.blocked_by,
  member_count: d.member_count,
  created_at: d.created_at.toISOString(),
  updated_at: d.updated_at.toISOString(),
});

const Line = Type.Optional(Type.Integer({ minimum: 1, description: "the CSV line the row starts on (CSV only)" }));
const count = Type.Integer({ minimum: 0 });

export const DepartmentsSyncAnswer = Type.Object({
  items: Type.Array(
    Type.Object({
      code: Type.String(),
      result: Type.Union(["insert", "update", "skip", "delete"].map((r) => Type.Literal(r))),
      line: Line,
    }),
    { description: "one per listed department in the list's order, then the deleted ones" },
  ),
  counts: Type.Object({ insert: count, update: count, skip: count, delete: count }),
});

export const MembersSyncAnswer = Type.Object({
  items: Type.Array(
    Type.Object({
      email: Type.String(),
      result: Type.Union(
        ["update", "skip", "delete", "member_not_found", "error"].map((r) => Type.Literal(r)),
        { description: "member_not_found: not a member (people join only by invitation); may be ignored" },
      ),
      line: Line,
      error: Type.Optional(
        Type.Union([Type.Literal("unknown_department"), Type.Literal("forbidden_role")], {
          description:
            "forbidden_role: the rule of PATCH/DELETE /v1/org/members/{id} refuses it (only the owner grants the admin role and changes or removes admins)",
        }),
      ),
      message: Type.Optional(Type.String()),
    }),
    { description: "one per listed member in the list's order, then the removed or kept unlisted members" },
  ),
  counts: Type.Object({
    insert: count,
    update: count,
    skip: count,
    delete: count,
    member_not_found: count,
    error: count,
  }),
});
