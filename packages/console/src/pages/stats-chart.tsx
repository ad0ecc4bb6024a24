import { useCallback, useRef, useState } from "react";
import type { AppStats } from "../api";
import { useI18n, type Locale } from "../i18n";
import { Card, ErrorNote, Spinner, useLoad } from "../ui";
import { bytes } from "../upload";

const H = 220;
const PAD = { l: 8, r: 8, t: 18, b: 26 };
const COLORS = { ok: "#3b5bdb", e4: "#f59f00", e5: "#e03131", p95: "#7048e8", bytes: "#0ca678" };

type Day = AppStats["daily"][number];
type Metric = "requests" | "latency" | "traffic";
interface Segment {
  key: string;
  value: number;
  color: string;
}

const num = (locale: Locale, n: number) => new Intl.NumberFormat(locale === "ko" ? "ko-KR" : "en-US").format(n);
const ms = (locale: Locale, n: number | null) => (n === null ? "—" : `${num(locale, Math.round(n))} ms`);

/** The width the chart has on the page, so its text is drawn at its own size at any screen width. */
function useWidth() {
  const [width, setWidth] = useState(720);
  const observer = useRef<ResizeObserver | null>(null);
  // a callback ref: the figure appears only once the statistics have loaded
  const ref = useCallback((el: HTMLElement | null) => {
    observer.current?.disconnect();
    if (!el) return;
    observer.current = new ResizeObserver(() => setWidth(Math.max(280, Math.round(el.clientWidth))));
    observer.current.observe(el);
  }, []);
  return { ref, width };
}

/** Daily bars drawn as SVG in the usage chart's style: stacked segments, a tick every few days, the top value. */
function Bars({
  W,
  days,
  segments,
  title,
  top,
  label,
}: {
  W: number;
  days: Day[];
  segments: (d: Day) => Segment[];
  title: (d: Day) => string;
  top: (max: number) => string;
  label: string;
}) {
  const { t } = useI18n();
  const totals = days.map((d) => segments(d).reduce((s, x) => s + x.value, 0));
  const max = Math.max(1, ...totals);
  const slot = (W - PAD.l - PAD.r) / Math.max(1, days.length);
  // a date every day, week or half month, as many as fit (a label takes about 40 px)
  const every = [1, 7, 15, 30].find((n) => (days.length / n) * 40 <= W - PAD.l - PAD.r) ?? 30;
  const scale = (v: number) => (v / max) * (H - PAD.t - PAD.b);
  return (
    <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label}>
      {totals.every((v) => v === 0) ? (
        <text x={W / 2} y={H / 2} textAnchor="middle" className="chart-empty">
          {t("stats.none")}
        </text>
      ) : (
        <text x={PAD.l} y={11} className="tick">
          {top(max)}
        </text>
      )}
      <line x1={PAD.l} x2={W - PAD.r} y1={H - PAD.b} y2={H - PAD.b} className="axis" />
      {days.map((d, i) => {
        let y = H - PAD.b;
        const x = PAD.l + i * slot + slot * 0.15;
        return (
          <g key={d.date}>
            <title>{title(d)}</title>
            {segments(d).map((s) => {
              const h = scale(s.value);
              y -= h;
              return <rect key={s.key} x={x} y={y} width={slot * 0.7} height={Math.max(0, h)} rx={2} fill={s.color} />;
            })}
            {(days.length - 1 - i) % every === 0 && (
              <text x={x + slot * 0.35} y={H - 8} textAnchor="middle" className="tick">
                {d.date.slice(5)}
              </text>
            )}
          </g>
        );
      })}
    </svg>
  );
}

/**
 * An app's daily statistics as the edge recorded them (GET …/stats?days=): totals, and one chart at a time of
 * requests (split into answered, 4xx and 5xx), the 95th percentile response time, or bytes sent.
 */
export function StatsCard({ load, name }: { load: (days: 7 | 30 | 90) => Promise<AppStats>; name: string }) {
  const { t, locale } = useI18n();
  const [days, setDays] = useState<7 | 30 | 90>(7);
  const [metric, setMetric] = useState<Metric>("requests");
  const stats = useLoad(() => load(days), [days, name]);
  const { ref, width } = useWidth();
  const s = stats.data;
  const errors = s ? s.totals.errors_4xx + s.totals.errors_5xx : 0;
  const legend: [string, string][] =
    metric === "requests"
      ? [
          [t("stats.ok"), COLORS.ok],
          ["4xx", COLORS.e4],
          ["5xx", COLORS.e5],
        ]
      : metric === "latency"
        ? [[t("stats.p95"), COLORS.p95]]
        : [[t("stats.bytes"), COLORS.bytes]];
  const tabs: [Metric, string][] = [
    ["requests", t("stats.requests")],
    ["latency", t("stats.latency")],
    ["traffic", t("stats.traffic")],
  ];
  return (
    <Card
      title={t("stats.title")}
      actions={
        <div className="actions" role="group" aria-label={t("stats.window")}>
          {([7, 30, 90] as const).map((d) => (
            <button key={d} type="button" className="btn small" aria-pressed={days === d} onClick={() => setDays(d)}>
              {t("stats.days", { n: d })}
            </button>
          ))}
        </div>
      }
    >
      <ErrorNote error={stats.error} />
      {!s && !stats.error && <Spinner label={t("common.loading")} />}
      {s && (
        <>
          <div className="mini-stats" data-testid="stats-totals">
            <div>
              <span className="stat-label">{t("stats.requests")}</span>
              <span className="mini-value">{num(locale, s.totals.requests)}</span>
            </div>
            <div>
              <span className="stat-label">{t("stats.errors")}</span>
              <span className="mini-value">{num(locale, errors)}</span>
              <span className="muted small">
                4xx {num(locale, s.totals.errors_4xx)} · 5xx {num(locale, s.totals.errors_5xx)}
              </span>
            </div>
            <div>
              <span className="stat-label">{t("stats.p95")}</span>
              <span className="mini-value">{ms(locale, s.totals.p95_ms)}</span>
              <span className="muted small">p50 {ms(locale, s.totals.p50_ms)}</span>
            </div>
            <div>
              <span className="stat-label">{t("stats.bytes")}</span>
              <span className="mini-value">{bytes(s.totals.bytes_out, locale)}</span>
            </div>
          </div>
          <div className="tabs small-tabs" role="group" aria-label={t("stats.metric")}>
            {tabs.map(([m, label]) => (
              <button
                key={m}
                type="button"
                className="btn small ghost"
                aria-pressed={metric === m}
                onClick={() => setMetric(m)}
              >
                {label}
              </button>
            ))}
          </div>
          <figure className="chart" data-testid="stats-chart" ref={ref}>
            {metric === "requests" && (
              <Bars
                W={width}
                days={s.daily}
                label={`${t("stats.requests")}: ${num(locale, s.totals.requests)}`}
                segments={(d) => [
                  { key: "ok", value: d.requests - d.errors_4xx - d.errors_5xx, color: COLORS.ok },
                  { key: "4xx", value: d.errors_4xx, color: COLORS.e4 },
                  { key: "5xx", value: d.errors_5xx, color: COLORS.e5 },
                ]}
                title={(d) => `${d.date}: ${num(locale, d.requests)} (4xx ${d.errors_4xx}, 5xx ${d.errors_5xx})`}
                top={(max) => num(locale, max)}
              />
            )}
            {metric === "latency" && (
              <Bars
                W={width}
                days={s.daily}
                label={`${t("stats.p95")}: ${ms(locale, s.totals.p95_ms)}`}
                segments={(d) => [{ key: "p95", value: d.p95_ms ?? 0, color: COLORS.p95 }]}
                title={(d) => `${d.date}: p95 ${ms(locale, d.p95_ms)}, p50 ${ms(locale, d.p50_ms)}`}
                top={(max) => ms(locale, max)}
              />
            )}
            {metric === "traffic" && (
              <Bars
                W={width}
                days={s.daily}
                label={`${t("stats.bytes")}: ${bytes(s.totals.bytes_out, locale)}`}
                segments={(d) => [{ key: "bytes", value: d.bytes_out, color: COLORS.bytes }]}
                title={(d) => `${d.date}: ${bytes(d.bytes_out, locale)}`}
                top={(max) => bytes(max, locale)}
              />
            )}
            <figcaption>
              <span className="muted">
                {s.from} – {s.to} (UTC)
              </span>
              {legend.map(([label, color]) => (
                <span key={label} className="legend">
                  <svg width="10" height="10" aria-hidden="true">
                    <rect width="10" height="10" rx="2" fill={color} />
                  </svg>
                  {label}
                </span>
              ))}
            </figcaption>
          </figure>
        </>
      )}
    </Card>
  );
}
