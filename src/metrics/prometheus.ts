/**
 * A small Prometheus text-format (0.0.4) writer: prom-client is not installed here, and the endpoint only renders
 * gauges read from the store at scrape time (no in-process registry to keep). Names and label values are escaped
 * as the format says; a family's HELP and TYPE come once, before its samples.
 */
export interface Family {
  name: string;
  help: string;
  type: "gauge" | "counter";
  samples: { labels?: Record<string, string>; value: number }[];
}

const escapeLabel = (v: string): string => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const escapeHelp = (v: string): string => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");

function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

export function renderPrometheus(families: Family[]): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) {
      const labels = Object.entries(s.labels ?? {});
      const l = labels.length ? `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}` : "";
      lines.push(`${f.name}${l} ${formatValue(s.value)}`);
    }
  }
  return lines.join("\n") + "\n";
}
