import { Type } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { Body } from "../../http/schemas.js";
import { route, type Route } from "../../http/route.js";
import type { Db } from "../../store/db.js";
import { Params, read, tags, write } from "../routes/schemas.js";
import { PodGroup } from "../routes/groups.js";
import { groupView } from "../groups/view.js";
import type { GroupsService, GroupWithMembers } from "../groups/service.js";
import type { GroupReleaseRow } from "./group-repo.js";
import { groupReleasesService } from "./group-service.js";
import { Release, releaseView } from "./routes.js";

const groupReleaseView = (r: GroupReleaseRow) => releaseView(r, r.spec);

/** A group's releases and its rollback (group-service.ts). */
export function groupReleaseRoutes(deps: {
  db: Db;
  groups: GroupsService;
  urls: { appsDomain: string; edgePort: number };
}): Route[] {
  const { groups, urls } = deps;
  const releases = groupReleasesService(deps);
  const view = (g: GroupWithMembers) => groupView(g, groups.envOf(g.group), urls, groups.secretEnvOf(g.group));

  return [
    route({
      method: "GET",
      url: "/v1/pod-groups/:id/releases",
      operationId: "listPodGroupReleases",
      tags,
      summary: "The group's numbered releases, newest first: what changed, who, when, and the outcome.",
      summaryKo: "팟 그룹의 릴리스 목록(최신순).",
      auth: read,
      params: Params,
      response: { 200: Type.Array(Release) },
      handler: async (request) => {
        return (await releases.list(callerOf(request), request.params.id)).map(groupReleaseView);
      },
    }),
    route({
      method: "POST",
      url: "/v1/pod-groups/:id/rollback",
      operationId: "rollbackPodGroup",
      tags,
      summary:
        "Return the group to an earlier release (default: the last one that served before the current): a new release with its spec, rolled over the members a batch at a time (202).",
      summaryKo: "팟 그룹을 이전 릴리스로 되돌립니다(배치 단위 안전한 롤아웃).",
      auth: write,
      admits: true,
      errors: ["conflict", "bad_size", "image_forbidden", "provision_failed", "runtime_unavailable"],
      params: Params,
      body: Body({ release: Type.Optional(Type.Integer({ minimum: 1 })) }),
      response: { 202: PodGroup },
      handler: async (request, reply) =>
        reply.code(202).send(view(await releases.rollback(callerOf(request), request.params.id, request.body.release))),
    }),
  ];
}
