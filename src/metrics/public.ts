/**
 * What other areas may use of metrics without reading its tables: the runtime samples of pods, for alert rules
 * (src/alerts).
 */
export { samplesOf, type PodSample } from "./repo.js";
