import { useState } from "react";
import { client } from "../api";
import { useI18n, type Locale, type MessageKey } from "../i18n";
import { Card, ErrorNote, Spinner, useLoad } from "../ui";
import { bytes } from "../upload";

/** One point of any metrics answer (GET …/metrics): its start and its figures, null where nothing was sampled. */
type Point = { at: string } & Record<string, number | null | string>;
interface Series {
  step: number;
  points: Point[];
}

export type Unit = "count" | "percent" | "bytes" | "ms" | "ratio" | "seconds" | "rate";

/** A chart of one figure of the series. */
export interface ChartSpec {
  key: string;
  label: MessageKey;
  unit: Unit;
}

/** the periods offered, with a step giving 60-168 points (whole hours read the hourly roll-up) */
const PERIODS = [
  { id: "1h", ms: 3_600_000, step: 60 },
  { id: "24h", ms: 86_400_000, step: 600 },
  { id: "7d", ms: 7 * 86_400_000, step: 3600 },
  { id: "30d", ms: 30 * 86_400_000, step: 21_600 },
] as const;

function format(locale: Locale, unit: Unit, v: number): string {
  const n = (x: number, digits = 0) =>
    new Intl.NumberFormat(locale === "ko" ? "ko-KR" : "en-US", { maximumFractionDigits: digits }).format(x);
  switch (unit) {
    case "bytes":
      return bytes(v, locale);
    case "percent":
      return `${n(v, 1)} %`;
    case "ms":
      return `${n(v)} ms`;
    case "ratio":
      return `${n(v * 100, 1)} %`;
    case "rate":
      return `${n(v, 2)}/s`;
    case "seconds":
      return v >= 3600 ? `${n(v / 3600, 1)} h` : v >= 60 ? `${n(v / 60)} min` : `${n(v)} s`;
    default:
      return n(v, 1);
  }
}

/**
 * A line as SVG path data over a 0..W × 0..H box; a null breaks the line (a gap where nothing was sampled, not a
 * fall to zero).
 */
export function linePath(values: (number | null)[], W: number, H: number): string {
  const at = scaler(values, W, H);
  let d = "";
  let pen = false;
  values.forEach((v, i) => {
    if (v === null) {
      pen = false;
      return;
    }
    const [x, y] = at(i, v);
    d += `${pen ? "L" : "M"}${x.toFixed(1)} ${y.toFixed(1)} `;
    pen = true;
  });
  return d.trim();
}

/** where value v of point i sits in the box (the highest value at the top) */
function scaler(values: (number | null)[], W: number, H: number) {
  const max = Math.max(0, ...values.map((v) => v ?? 0));
  const dx = values.length > 1 ? W / (values.length - 1) : 0;
  return (i: number, v: number): [number, number] => [i * dx, H - (max ? (v / max) * H : 0)];
}

function Sparkline({ spec, points }: { spec: ChartSpec; points: Point[] }) {
  const { t, locale } = useI18n();
  const values = points.map((p) => (typeof p[spec.key] === "number" ? (p[spec.key] as number) : null));
  const known = values.filter((v): v is number => v !== null);
  const last = known.at(-1);
  const peak = known.length ? Math.max(...known) : undefined;
  const label = t(spec.label);
  return (
    <figure className="spark" data-testid="metrics-chart" data-key={spec.key}>
      <figcaption>
        <span className="stat-label">{label}</span>
        {last !== undefined && (
          <span className="muted small">
            {t("metrics.last", { value: format(locale, spec.unit, last) })} ·{" "}
            {t("metrics.peak", { value: format(locale, spec.unit, peak!) })}
          </span>
        )}
      </figcaption>
      <svg viewBox="0 0 300 60" preserveAspectRatio="none" role="img" aria-label={label} width="100%" height="60">
        <line x1={0} x2={300} y1={59.5} y2={59.5} className="axis" />
        {known.length > 0 && (
          <g transform="translate(0 2)" fill="none" stroke="#3b5bdb">
            <path d={linePath(values, 300, 56)} strokeWidth={1.5} vectorEffect="non-scaling-stroke" />
            {/* the newest value as a dot: a lone sample (no line to draw) shows too */}
            {(() => {
              const i = values.findLastIndex((v) => v !== null);
              const [x, y] = scaler(values, 300, 56)(i, values[i]!);
              return <circle cx={x} cy={y} r={2} fill="#3b5bdb" vectorEffect="non-scaling-stroke" />;
            })()}
          </g>
        )}
      </svg>
    </figure>
  );
}

/**
 * A resource's per-minute series (GET `path`?from&to&step) as small line charts, one per figure, over a period
 * the user picks; reloaded every minute while the shortest period is shown.
 */
export function MetricsCard({ path, charts }: { path: string; charts: ChartSpec[] }) {
  const { t } = useI18n();
  const [period, setPeriod] = useState<(typeof PERIODS)[number]["id"]>("1h");
  const p = PERIODS.find((x) => x.id === period)!;
  const series = useLoad(
    async () => {
      const to = Date.now();
      const query = { from: new Date(to - p.ms).toISOString(), to: new Date(to).toISOString(), step: p.step };
      return (await client.request("GET", path, { query })) as Series;
    },
    [path, period],
    () => (period === "1h" ? 60_000 : null),
  );
  const s = series.data;
  const sampled = s?.points.some((pt) => charts.some((c) => typeof pt[c.key] === "number" && pt[c.key] !== 0));
  return (
    <Card
      title={t("metrics.title")}
      actions={
        <div className="actions" role="group" aria-label={t("metrics.window")}>
          {PERIODS.map((x) => (
            <button
              key={x.id}
              type="button"
              className="btn small"
              aria-pressed={period === x.id}
              onClick={() => setPeriod(x.id)}
            >
              {x.id}
            </button>
          ))}
        </div>
      }
    >
      <ErrorNote error={series.error} />
      {!s && !series.error && <Spinner label={t("common.loading")} />}
      {s && !sampled && <p className="muted">{t("metrics.empty")}</p>}
      {s && (
        <div className="spark-grid">
          {charts.map((c) => (
            <Sparkline key={c.key} spec={c} points={s.points} />
          ))}
        </div>
      )}
    </Card>
  );
}

/** The charts of each kind of resource. */
export const POD_CHARTS: ChartSpec[] = [
  { key: "cpu_percent", label: "metrics.cpu", unit: "percent" },
  { key: "memory_bytes", label: "metrics.memory", unit: "bytes" },
  { key: "requests", label: "metrics.requests", unit: "count" },
  { key: "errors_5xx", label: "metrics.errors", unit: "count" },
  { key: "p95_ms", label: "metrics.p95", unit: "ms" },
  { key: "net_rx_bytes", label: "metrics.netRx", unit: "bytes" },
  { key: "net_tx_bytes", label: "metrics.netTx", unit: "bytes" },
];
export const GROUP_CHARTS: ChartSpec[] = [...POD_CHARTS, { key: "replicas", label: "metrics.replicas", unit: "count" }];
export const SITE_CHARTS: ChartSpec[] = [
  { key: "requests", label: "metrics.requests", unit: "count" },
  { key: "errors_5xx", label: "metrics.errors", unit: "count" },
  { key: "p95_ms", label: "metrics.p95", unit: "ms" },
  { key: "bytes_out", label: "metrics.bytes", unit: "bytes" },
];
export const DATABASE_CHARTS: ChartSpec[] = [
  { key: "connections", label: "metrics.connections", unit: "count" },
  { key: "commits_per_second", label: "metrics.commits", unit: "rate" },
  { key: "size_bytes", label: "metrics.size", unit: "bytes" },
  { key: "cache_hit_ratio", label: "metrics.cacheHit", unit: "ratio" },
  { key: "replication_lag_bytes", label: "metrics.lag", unit: "bytes" },
  { key: "base_backup_age_seconds", label: "metrics.backupAge", unit: "seconds" },
  { key: "archived_wal_age_seconds", label: "metrics.walAge", unit: "seconds" },
];
