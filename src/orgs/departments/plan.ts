/**
 * The differences a chart source (CSV upload, JSON sync, PUT) makes, computed in memory over the whole current
 * chart before anything is written: per-item results, new rows in topological order (parents first), updated rows,
 * deleted rows. Structural mistakes (a duplicate code, an unknown parent, a cycle) refuse the whole request.
 */
import { ApiError } from "../../http/errors.js";
import type { ChartRow, DepartmentWrite } from "./repo.js";

export interface DepartmentInput {
  code: string;
  name: string;
  parent_code: string | null;
  approver_email: string | null;
  /** the CSV line the row starts on (CSV uploads only) */
  line?: number;
}

export type DepartmentResult = "insert" | "update" | "skip" | "delete";

export interface DepartmentItem {
  code: string;
  result: DepartmentResult;
  line?: number;
}

export interface DepartmentPlan {
  items: DepartmentItem[];
  inserts: DepartmentWrite[];
  updates: DepartmentWrite[];
  deletes: ChartRow[];
  /** code → id of every department after the change */
  ids: Map<string, string>;
}

export interface PlanOptions {
  /** departments missing from the input are deleted (JSON sync with implicit_deletion) */
  implicitDeletion: boolean;
  /** a parent must come on an earlier line, or be a department already in the chart and not in the file (CSV) */
  parentsFirst: boolean;
}

const invalid = (message: string) => new ApiError("invalid_request", message);
const where = (d: DepartmentInput) => (d.line !== undefined ? `line ${d.line}` : `department ${d.code}`);

/** Refuses duplicate codes and parents that will not exist. */
function checkReferences(existing: Map<string, ChartRow>, input: DepartmentInput[], opts: PlanOptions): void {
  const byCode = new Map<string, DepartmentInput>();
  for (const d of input) {
    const first = byCode.get(d.code);
    if (first)
      throw invalid(
        `${where(d)}: code ${d.code} appears twice${first.line !== undefined ? ` (first on line ${first.line})` : ""}.`,
      );
    byCode.set(d.code, d);
  }
  const seen = new Set<string>();
  for (const d of input) {
    const parent = d.parent_code;
    seen.add(d.code);
    if (parent === null) continue;
    if (parent === d.code) throw invalid(`${where(d)}: department ${d.code} cannot be its own parent.`);
    const listed = byCode.get(parent);
    if (opts.parentsFirst) {
      if (listed && !seen.has(parent))
        throw invalid(
          `${where(d)}: parent_code ${parent} is not defined above${listed.line !== undefined ? ` (it is on line ${listed.line})` : ""}; a parent must come before its children.`,
        );
      if (!listed && !existing.has(parent))
        throw invalid(`${where(d)}: parent_code ${parent} is not defined above nor in the chart.`);
    } else if (!listed && (opts.implicitDeletion || !existing.has(parent))) {
      throw invalid(
        `${where(d)}: parent_code ${parent} is not in the list${opts.implicitDeletion ? " (with implicit_deletion the list is the whole chart)" : " nor in the chart"}.`,
      );
    }
  }
}

/** Refuses a chart where following parents comes back to where it started (names the cycle). */
function checkAcyclic(parentOf: Map<string, string | null>, lineOf: Map<string, number>): void {
  const state = new Map<string, 1 | 2>(); // 1: on the current walk, 2: known to reach a root
  for (const start of parentOf.keys()) {
    const walk: string[] = [];
    let code: string | null | undefined = start;
    while (code !== null && code !== undefined && !state.has(code)) {
      state.set(code, 1);
      walk.push(code);
      code = parentOf.get(code);
    }
    if (code !== null && code !== undefined && state.get(code) === 1) {
      const cycle = walk.slice(walk.indexOf(code));
      const lines = cycle.map((c) => lineOf.get(c)).filter((l) => l !== undefined);
      throw invalid(
        `${lines.length ? `line ${Math.max(...lines)}: ` : ""}the parents form a cycle: ${[...cycle, code].join(" → ")} (a department cannot be under its own descendant).`,
      );
    }
    for (const c of walk) state.set(c, 2);
  }
}

/** Codes in an order where every parent comes before its children. */
function parentsFirst(codes: string[], parentOf: Map<string, string | null>): string[] {
  const wanted = new Set(codes);
  const done = new Set<string>();
  const out: string[] = [];
  for (const start of codes) {
    const chain: string[] = [];
    for (let c: string | null | undefined = start; c && wanted.has(c) && !done.has(c); c = parentOf.get(c)) {
      chain.push(c);
      done.add(c);
    }
    out.push(...chain.reverse());
  }
  return out;
}

export function planDepartments(
  chart: ChartRow[],
  input: DepartmentInput[],
  opts: PlanOptions,
  newId: () => string,
): DepartmentPlan {
  const existing = new Map(chart.map((r) => [r.code, r]));
  const codeOfId = new Map(chart.map((r) => [r.id, r.code]));
  checkReferences(existing, input, opts);

  // the chart after the change, as code → parent code
  const parentOf = new Map<string, string | null>();
  if (!opts.implicitDeletion)
    for (const r of chart) parentOf.set(r.code, r.parent_id === null ? null : (codeOfId.get(r.parent_id) ?? null));
  for (const d of input) parentOf.set(d.code, d.parent_code);
  checkAcyclic(parentOf, new Map(input.filter((d) => d.line !== undefined).map((d) => [d.code, d.line!])));

  const ids = new Map<string, string>();
  for (const code of parentOf.keys()) ids.set(code, existing.get(code)?.id ?? newId());
  const write = (d: DepartmentInput): DepartmentWrite => ({
    id: ids.get(d.code)!,
    code: d.code,
    name: d.name,
    parentId: d.parent_code === null ? null : ids.get(d.parent_code)!,
    approverEmail: d.approver_email,
  });

  const items: DepartmentItem[] = [];
  const inserted = new Map<string, DepartmentWrite>();
  const updates: DepartmentWrite[] = [];
  for (const d of input) {
    const row = write(d);
    const now = existing.get(d.code);
    let result: DepartmentResult;
    if (!now) {
      result = "insert";
      inserted.set(d.code, row);
    } else if (now.name !== row.name || now.parent_id !== row.parentId || now.approver_email !== row.approverEmail) {
      result = "update";
      updates.push(row);
    } else {
      result = "skip";
    }
    items.push(d.line !== undefined ? { code: d.code, result, line: d.line } : { code: d.code, result });
  }
  const deletes = opts.implicitDeletion ? chart.filter((r) => !parentOf.has(r.code)) : [];
  deletes.sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  for (const r of deletes) items.push({ code: r.code, result: "delete" });
  const inserts = parentsFirst([...inserted.keys()], parentOf).map((c) => inserted.get(c)!);
  return { items, inserts, updates, deletes, ids };
}

export function countResults<R extends string>(items: { result: R }[], keys: readonly R[]): Record<R, number> {
  const counts = Object.fromEntries(keys.map((k) => [k, 0])) as Record<R, number>;
  for (const i of items) counts[i.result]++;
  return counts;
}
