import type { PodRow } from "../repo.js";
import type { GroupSpec } from "../groups/repo.js";

/** The fields whose change makes a new release (what runs, how it is checked and rolled out). */
const RELEASED = ["image", "command", "env", "size", "port", "checks", "deploy"] as const;

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** What differs between two versions of a pod, by the names the API uses (env compared opened, never shown). */
export function changedFields(before: PodRow, after: PodRow, envOf: (row: PodRow) => Record<string, string>): string[] {
  return RELEASED.filter((field) => {
    if (field === "env") return !same(sortedEntries(envOf(before)), sortedEntries(envOf(after)));
    if (field === "deploy")
      return (
        before.stop_grace_seconds !== after.stop_grace_seconds ||
        before.rollout_deadline_seconds !== after.rollout_deadline_seconds
      );
    return !same(before[field], after[field]);
  });
}

const sortedEntries = (env: Record<string, string>) => Object.entries(env).sort(([a], [b]) => a.localeCompare(b));

export const describeChange = (changed: string[]) => `changed ${changed.join(", ")}`;

/** The same for a group's members' spec (env compared opened, never shown). */
export function groupChangedFields(
  before: GroupSpec,
  after: GroupSpec,
  envOf: (envSealed: string) => Record<string, string>,
): string[] {
  return RELEASED.filter((field) => {
    if (field === "env") return !same(sortedEntries(envOf(before.env_sealed)), sortedEntries(envOf(after.env_sealed)));
    return !same(before[field], after[field]);
  });
}
