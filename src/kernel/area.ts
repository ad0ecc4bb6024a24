/**
 * The area module contract, in one import: `defineArea` and `AreaModule` (kernel/context.ts, beside the
 * platform they receive) and what areas hand the kernel (kernel/contracts.ts).
 */
export type * from "./contracts.js";
export { defineArea, type AreaModule } from "./context.js";
export { rowLookup } from "./instances.js";
export { everyMinute } from "./periodic.js";
