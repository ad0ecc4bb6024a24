import { Type } from "@sinclair/typebox";
import { Body } from "../../http/schemas.js";
import type { Route } from "../../http/route.js";
import type { Db } from "../../store/db.js";
import { PodGroup } from "../routes/groups.js";
import { groupView } from "../groups/view.js";
import type { GroupsService, GroupWithMembers } from "../groups/service.js";
import type { GroupReleaseRow } from "./group-repo.js";
import { groupReleasesService } from "./group-service.js";
import { appReleaseRoutes, releaseView } from "./routes.js";

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

  return appReleaseRoutes({
    url: "/v1/pod-groups",
    noun: "PodGroup",
    called: { en: "group", ko: "팟 그룹" },
    list: async (caller, id) => (await releases.list(caller, id)).map(groupReleaseView),
    rollback: {
      summary:
        "Return the group to an earlier release (default: the last one that served before the current): a new release with its spec, rolled over the members a batch at a time (202).",
      summaryKo: "팟 그룹을 이전 릴리스로 되돌립니다(배치 단위 안전한 롤아웃).",
      body: Body({ release: Type.Optional(Type.Integer({ minimum: 1 })) }),
      schema: PodGroup,
      run: async (caller, id, { release }) => view(await releases.rollback(caller, id, release)),
    },
  });
}
