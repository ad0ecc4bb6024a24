/**
 * The differences the suite's chart makes to the organization's departments, computed in memory before anything is
 * written (like the HR sync's plan in src/orgs/departments): departments are matched on the suite's unit id, never
 * the name; a unit the suite no longer lists is tombstoned, one it lists again comes back.
 */
import type { SuiteUnit } from "../provider.js";
import type { MirrorRow, MirrorWrite } from "../../orgs/public.js";

/** The HR sync's results (src/orgs/departments): insert, update, skip, and delete for a tombstoned unit. */
export type DepartmentResult = "insert" | "update" | "skip" | "delete";
export const DEPARTMENT_RESULTS = ["insert", "update", "skip", "delete"] as const;

export interface DepartmentItem {
  code: string;
  name: string;
  suite_unit_id: string;
  result: DepartmentResult;
}

export interface MirrorPlan {
  items: DepartmentItem[];
  /** parents first */
  inserts: MirrorWrite[];
  updates: MirrorWrite[];
  tombstones: string[];
  /** tombstoned rows that give their unit id up to a live department of the same code (see below) */
  releases: string[];
  /** unit id → department id, after the change */
  departments: Map<string, string>;
}

/**
 * Units parents first. A parent the suite does not list, or one that would make a cycle (a suite's data is not
 * ours to trust), counts as none: the unit becomes a root.
 */
export function parentsFirst(units: SuiteUnit[]): { unit: SuiteUnit; parentId: string | null }[] {
  const byId = new Map<string, SuiteUnit>();
  for (const u of units) if (!byId.has(u.id)) byId.set(u.id, u);
  const out: { unit: SuiteUnit; parentId: string | null }[] = [];
  const state = new Map<string, 1 | 2>(); // 1: on the current walk, 2: placed
  for (const start of byId.values()) {
    const walk: SuiteUnit[] = [];
    let at: SuiteUnit | undefined = start;
    while (at && !state.has(at.id)) {
      state.set(at.id, 1);
      walk.push(at);
      at = at.parentId ? byId.get(at.parentId) : undefined;
    }
    // `at` is placed (2), on this walk (1: a cycle, cut at the walk's last unit) or none
    for (let i = walk.length - 1; i >= 0; i--) {
      const u = walk[i];
      const parent = u.parentId ? byId.get(u.parentId) : undefined;
      const cut = i === walk.length - 1 && at !== undefined && state.get(at.id) === 1;
      out.push({ unit: u, parentId: parent && !cut ? parent.id : null });
      state.set(u.id, 2);
    }
  }
  return out;
}

export function planMirror(rows: MirrorRow[], units: SuiteUnit[], newId: () => string): MirrorPlan {
  const byUnit = new Map(rows.filter((r) => r.suite_unit_id !== null).map((r) => [r.suite_unit_id!, r]));
  const liveByCode = new Map(rows.filter((r) => r.removed_at === null).map((r) => [r.code, r]));
  const departments = new Map<string, string>();
  const items: DepartmentItem[] = [];
  const inserts: MirrorWrite[] = [];
  const updates: MirrorWrite[] = [];
  const releases: string[] = [];

  for (const { unit, parentId } of parentsFirst(units)) {
    let row = byUnit.get(unit.id);
    // a live department of the unit's code that nothing mirrors (made by hand or an HR sync before the link) is
    // taken over rather than duplicated; a tombstone of the same unit then gives the unit id up
    const sameCode = liveByCode.get(unit.id);
    if ((!row || row.removed_at) && sameCode && sameCode.suite_unit_id === null) {
      if (row) releases.push(row.id);
      row = sameCode;
    }
    const parent = parentId === null ? null : departments.get(parentId)!;
    if (!row) {
      // the unit id is the code; a live department holding it for another unit keeps it, this one gets a suffix
      const id = newId();
      const code = liveByCode.has(unit.id) ? `${unit.id}~${id.slice(0, 8)}` : unit.id;
      inserts.push({ id, code, name: unit.name, parentId: parent, unitId: unit.id });
      departments.set(unit.id, id);
      items.push({ code, name: unit.name, suite_unit_id: unit.id, result: "insert" });
      continue;
    }
    departments.set(unit.id, row.id);
    const changed =
      row.name !== unit.name || row.parent_id !== parent || row.removed_at !== null || row.suite_unit_id !== unit.id;
    if (changed) updates.push({ id: row.id, code: row.code, name: unit.name, parentId: parent, unitId: unit.id });
    items.push({ code: row.code, name: unit.name, suite_unit_id: unit.id, result: changed ? "update" : "skip" });
  }

  const gone = rows
    .filter((r) => r.suite_unit_id !== null && r.removed_at === null && !departments.has(r.suite_unit_id))
    .sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  for (const r of gone) items.push({ code: r.code, name: r.name, suite_unit_id: r.suite_unit_id!, result: "delete" });
  return { items, inserts, updates, tombstones: gone.map((r) => r.id), releases, departments };
}

export function countResults<R extends string>(items: { result: R }[], keys: readonly R[]): Record<R, number> {
  const counts = Object.fromEntries(keys.map((k) => [k, 0])) as Record<R, number>;
  for (const i of items) counts[i.result]++;
  return counts;
}

export type { MirrorRow, MirrorWrite };
