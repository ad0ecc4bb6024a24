import type { AdmissionRequest } from "../kernel/area.js";
import type { Owner } from "../kernel/owner.js";
import type { PodRow } from "./repo.js";
import { POD_KIND } from "./sizes.js";

/**
 * What admission judges when a stopped pod runs again (a start, or a wake from idleness): concurrent-run limits
 * (partner departments), deploy blocks, funds and budgets, as for the instance it brings back.
 */
export function startAdmission(pod: PodRow, owner: Owner, accountId: string): AdmissionRequest {
  return {
    owner,
    accountId,
    kind: POD_KIND,
    size: pod.size,
    update: true,
    starts: 1,
    image: pod.image,
    gpu: pod.gpu ? 1 : 0,
    ...(pod.group_id && { shape: "pod-group", partOf: pod.group_id }),
  };
}
