import { Type } from "@sinclair/typebox";
import { Body } from "../../http/schemas.js";
import { databaseView } from "../view.js";
import { SLUG } from "../schemas.js";
import { caller, Instance, InstanceWithCommand, Params, read, Size, tags, type RouteDeps } from "./schemas.js";
import { commandRoute, createdView } from "./instance-route.js";
import { route, type Route } from "../../http/route.js";

/** Branches (issue 30): a database made as a copy of another at a moment, listed under it, reset to it. */
export function branchRoutes({ svc, config }: RouteDeps): Route[] {
  return [
    route({
      method: "POST",
      url: "/v1/databases/:id/branches",
      operationId: "createDatabaseBranch",
      tags,
      summary:
        "Branch: a new database (own credentials, size and billing) that is a copy of this one at `at` (RFC 3339 within retention; default now). The parent keeps running. 201 with one-time passwords; state creating until the copy is made.",
      summaryKo: "데이터베이스 브랜치(특정 시점의 복사본)를 만듭니다.",
      // a creation: instance-limited keys cannot make new instances
      auth: { scope: "databases:write", instance: "create" },
      admits: true,
      errors: [
        "bad_time",
        "future_time",
        "out_of_retention",
        "slug_taken",
        "provision_failed",
        "database_removed",
        "still_creating",
        "not_restorable",
        "not_running",
      ],
      validationCodes: { "/slug": "bad_slug", "/name": "bad_slug", "/size": "bad_size" },
      params: Params,
      body: Body({
        at: Type.Optional(Type.String({ maxLength: 64, description: "RFC 3339 moment within retention; default now" })),
        name: Type.Optional(Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 })),
        slug: Type.Optional(Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 })),
        size: Type.Optional(Size),
      }),
      response: { 201: InstanceWithCommand },
      handler: async (request, reply) =>
        reply
          .code(201)
          .send(createdView(await svc.createBranch(caller(request), request.params.id, request.body ?? {}), config)),
    }),
    route({
      method: "GET",
      url: "/v1/databases/:id/branches",
      operationId: "listDatabaseBranches",
      tags,
      summary: "The database's live branches, oldest first (each with parent_id and branched_at).",
      summaryKo: "데이터베이스의 브랜치 목록.",
      auth: read,
      params: Params,
      response: { 200: Type.Array(Instance) },
      handler: async (request) =>
        (await svc.listBranches(caller(request), request.params.id)).map((row) => databaseView(row, config)),
    }),
    commandRoute(
      {
        method: "POST",
        path: "/reset",
        operationId: "resetDatabaseBranch",
        summary:
          "Reset a branch to its parent's current state (same URL and passwords; state creating until done). 409 not_a_branch on a database that is no branch.",
        summaryKo: "브랜치를 부모의 현재 상태로 되돌립니다.",
        errors: ["not_a_branch", "database_removed", "still_creating", "not_restorable", "not_running"],
      },
      (p, id) => svc.resetBranch(p, id),
    ),
  ];
}
