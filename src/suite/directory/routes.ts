import { Type } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { orgOf, write } from "../../orgs/public.js";
import { route, type Route } from "../../http/route.js";
import type { DirectoryService } from "./service.js";

const Counts = (keys: readonly string[]) => Type.Object(Object.fromEntries(keys.map((k) => [k, Type.Integer()])));

const SyncAnswer = Type.Object({
  items: Type.Array(
    Type.Object({
      code: Type.String(),
      name: Type.String(),
      suite_unit_id: Type.String({ description: "the suite's stable org unit id the department is matched on" }),
      result: Type.Union(
        ["insert", "update", "skip", "delete"].map((r) => Type.Literal(r)),
        {
          description: "delete: the suite no longer lists the unit; the department is tombstoned, not deleted",
        },
      ),
    }),
  ),
  counts: Counts(["insert", "update", "skip", "delete"]),
  members: Type.Array(
    Type.Object({
      account_id: Type.String({ format: "uuid" }),
      email: Type.String(),
      result: Type.Union(
        ["update", "skip", "delete"].map((r) => Type.Literal(r)),
        {
          description: "update: department set from the primary suite unit; delete: deprovisioned",
        },
      ),
      department_code: Type.Union([Type.String(), Type.Null()]),
      reason: Type.Optional(Type.Union([Type.Literal("unlisted"), Type.Literal("outside_policy")])),
      message: Type.Optional(Type.String()),
    }),
  ),
  member_counts: Counts(["update", "skip", "delete"]),
});

/** The suite's directory part (README.md of src/suite, "Directory"). */
export function directoryRoutes(svc: DirectoryService): Route[] {
  return [
    route({
      method: "POST",
      url: "/v1/org/suite/sync-departments",
      operationId: "syncOrgSuiteDepartments",
      tags: ["suite"],
      summary:
        "Mirror the linked suite company's org chart now (admin): departments matched on the suite's unit id with a result per item (insert, update, skip, delete; a removed unit is tombstoned), each suite member's department from their primary unit, and staff the suite no longer lists or the join policy no longer admits deprovisioned (the owner never: reported). 404 outside a suite-linked organization.",
      summaryKo: "스위트 조직도를 지금 부서로 반영합니다(항목별 결과, 목록에서 빠진 직원은 해제).",
      auth: write,
      orgRole: "admin",
      errors: ["suite_unavailable", "suite_not_configured"],
      response: { 200: SyncAnswer },
      handler: async (request) => svc.sync(orgOf(request).orgId, callerOf(request)),
    }),
  ];
}
