/**
 * Who owns each name that areas declare into one shared table (error codes, scope resources): `owners` with every
 * area's `names` added, checked before anything is merged. A name two owners declare stops start-up, naming both;
 * an area declaring its own names again (a second platform in one process) is no duplicate.
 */
export function ownersWith(
  owners: ReadonlyMap<string, string>,
  areas: readonly { area: string; names: string[] }[],
  what: string,
): Map<string, string> {
  const next = new Map(owners);
  for (const { area, names } of areas) {
    for (const name of names) {
      const owner = next.get(name);
      if (owner !== undefined && owner !== area)
        throw new Error(`${what} ${name} is declared twice: by ${owner} and by the ${area} area`);
      next.set(name, area);
    }
  }
  return next;
}
