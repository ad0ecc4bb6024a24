import type { MeteredResource, MeteringSource } from "../../kernel/area.js";
import { meteredResource } from "../../kernel/metered.js";
import { billableVolumes, billableVolumesOf, volumeNames, type BillableVolume } from "./repo.js";

/** catalog/prices.json resources.volume: one size, paid per GB-hour of storage. */
export const VOLUME_KIND = "volume";
export const VOLUME_SIZE = "standard";

// volumes have no instance price; what keeps data pays storage
const metered = (r: BillableVolume): MeteredResource => meteredResource(r, VOLUME_KIND, VOLUME_SIZE, r.size_gb);

/** What billing meters of volumes: their size in GB while they exist, attached or not. */
export function volumeMetering(): MeteringSource {
  return {
    kind: VOLUME_KIND,
    billable: async (q, page) => (await billableVolumes(q, page)).map(metered),
    billableOf: async (q, owner) => (await billableVolumesOf(q, owner)).map(metered),
    describe: (q, ids) => volumeNames(q, ids),
  };
}
