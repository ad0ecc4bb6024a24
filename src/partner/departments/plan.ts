/** Pure chart logic: validating a pushed chart (unknown parents, cycles), the per-item plan, ancestry and subtrees. */
import { ApiError } from "../../http/errors.js";
import type { DepartmentRow } from "./repo.js";

export interface ChartItem {
  code: string;
  parent_code: string | null;
  name: string | null;
}

export type ItemResult = "insert" | "update" | "skip" | "delete";

/** 400 for a duplicate code, a parent not in the pushed chart, or a cycle; the whole push is refused. */
export function validateChart(items: ChartItem[]): void {
  const byCode = new Map<string, ChartItem>();
  for (const d of items) {
    if (byCode.has(d.code)) throw new ApiError("invalid_request", `Department code "${d.code}" appears twice.`);
    byCode.set(d.code, d);
  }
  for (const d of items) {
    if (d.parent_code !== null && !byCode.has(d.parent_code))
      throw new ApiError(
        "invalid_request",
        `Department "${d.code}" names parentCode "${d.parent_code}", which is not in the chart.`,
      );
  }
  for (const d of items) {
    const seen = new Set<string>([d.code]);
    for (let p = d.parent_code; p !== null; p = byCode.get(p)!.parent_code) {
      if (seen.has(p)) throw new ApiError("invalid_request", `The chart has a cycle through department "${d.code}".`);
      seen.add(p);
    }
  }
}

/** What replacing `current` with `next` does to each code. */
export function planChart(current: DepartmentRow[], next: ChartItem[]): { code: string; result: ItemResult }[] {
  const have = new Map(current.map((d) => [d.code, d]));
  const wanted = new Set(next.map((d) => d.code));
  const out: { code: string; result: ItemResult }[] = next.map((d) => {
    const cur = have.get(d.code);
    if (!cur) return { code: d.code, result: "insert" };
    const same = cur.parent_code === d.parent_code && cur.name === d.name;
    return { code: d.code, result: same ? "skip" : "update" };
  });
  for (const d of current) if (!wanted.has(d.code)) out.push({ code: d.code, result: "delete" });
  return out;
}

/** The department and its ancestors, the department first. */
export function chainOf(all: DepartmentRow[], code: string): DepartmentRow[] {
  const byCode = new Map(all.map((d) => [d.code, d]));
  const chain: DepartmentRow[] = [];
  for (
    let d = byCode.get(code);
    d && chain.length <= all.length;
    d = d.parent_code ? byCode.get(d.parent_code) : undefined
  )
    chain.push(d);
  return chain;
}

/** The department's code and every sub-department's, at any depth. */
export function subtreeOf(all: DepartmentRow[], code: string): string[] {
  const out = [code];
  for (let i = 0; i < out.length; i++) for (const d of all) if (d.parent_code === out[i]) out.push(d.code);
  return out;
}
