/**
 * What other areas may use of metrics without reading its tables: the runtime samples of pods, for alert rules
 * (src/alerts), and a database's minute rows, for alert rules on databases.
 */
import type { Queryable } from "../store/db.js";
import { databaseRows } from "./series-repo.js";

export { samplesOf, type PodSample } from "./repo.js";
export type { DatabaseSeriesRow } from "./series-repo.js";

/** One database's minute rows in [from, to) (epoch ms), oldest first. */
export const databaseMinutes = (q: Queryable, databaseId: string, from: number, to: number) =>
  databaseRows(q, databaseId, from, to, "minutes");
