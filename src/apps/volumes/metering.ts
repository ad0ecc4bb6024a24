import type { MeteredResource, MeteringSource } from "../../kernel/area.js";
import { meteredResource, tableMetering } from "../../kernel/metered.js";
import { BILLABLE_VOLUMES, volumeNames, type BillableVolume } from "./repo.js";

/** catalog/prices.json resources.volume: one size, paid per GB-hour of storage. */
export const VOLUME_KIND = "volume";
export const VOLUME_SIZE = "standard";

// volumes have no instance price; what keeps data pays storage
const metered = (r: BillableVolume): MeteredResource => meteredResource(r, VOLUME_KIND, VOLUME_SIZE, r.size_gb);

/** What billing meters of volumes: their size in GB while they exist, attached or not. */
export const volumeMetering = (): MeteringSource =>
  tableMetering(VOLUME_KIND, BILLABLE_VOLUMES, metered, (q, ids) => volumeNames(q, ids));
