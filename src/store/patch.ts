/**
 * The parameters of a partial UPDATE, where each field a patch may name is written
 * `col = CASE WHEN $n THEN $n+1 ELSE col END`: per field, in order, whether the patch names it and its value (null
 * when it names it as null, or leaves it out). Leaving a field out and naming it null differ: only the second clears.
 */
export function patchParams<P extends object>(patch: P, fields: readonly (keyof P)[]): unknown[] {
  return fields.flatMap((f) => [patch[f] !== undefined, patch[f] ?? null]);
}
