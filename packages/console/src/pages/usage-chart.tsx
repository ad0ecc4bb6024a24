import { api, unwrap } from "../api";
import { money, useI18n } from "../i18n";
import { ErrorNote, Spinner, useLoad } from "../ui";

const COLORS = ["#3b5bdb", "#0ca678", "#f59f00", "#e64980", "#7048e8", "#1098ad"];
const W = 720;
const H = 220;
const PAD = { l: 8, r: 8, t: 12, b: 26 };

/** Daily usage of the last 30 days as stacked bars, one colour per kind, drawn as SVG (no chart library). */
export function UsageChart() {
  const { t, locale } = useI18n();
  const usage = useLoad(async () => {
    const to = new Date();
    const from = new Date(to.getTime() - 29 * 86_400_000);
    const day = (d: Date) => d.toISOString().slice(0, 10);
    return await unwrap(api.GET("/v1/billing/usage-daily", { params: { query: { from: day(from), to: day(to) } } }));
  }, []);
  if (usage.error) return <ErrorNote error={usage.error} />;
  if (!usage.data) return <Spinner label={t("common.loading")} />;
  // every day of the period gets its slot, also the days without usage
  const byDate = new Map(usage.data.days.map((d) => [d.date, d]));
  const days = Array.from({ length: 30 }, (_v, i) => {
    const date = new Date(Date.now() - (29 - i) * 86_400_000).toISOString().slice(0, 10);
    return byDate.get(date) ?? { date, kinds: [], total_krw: 0 };
  });
  const kinds = [...new Set(days.flatMap((d) => d.kinds.map((k) => k.kind)))].sort();
  const totals = days.map((d) => d.kinds.reduce((s, k) => s + k.amount_microkrw, 0));
  const max = Math.max(1, ...totals);
  const slot = (W - PAD.l - PAD.r) / Math.max(1, days.length);
  const scale = (v: number) => (v / max) * (H - PAD.t - PAD.b);
  const label = `${t("bill.usage")}: ${t("bill.total", { amount: money(locale, usage.data.total_krw) })}`;
  return (
    <figure className="chart" data-testid="usage-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label}>
        {totals.every((v) => v === 0) && (
          <text x={W / 2} y={H / 2} textAnchor="middle" className="chart-empty">
            {t("bill.noUsage")}
          </text>
        )}
        <line x1={PAD.l} x2={W - PAD.r} y1={H - PAD.b} y2={H - PAD.b} className="axis" />
        {days.map((d, i) => {
          let y = H - PAD.b;
          const x = PAD.l + i * slot + slot * 0.15;
          return (
            <g key={d.date}>
              <title>{`${d.date}: ${money(locale, d.total_krw)}`}</title>
              {d.kinds.map((k) => {
                const h = scale(k.amount_microkrw);
                y -= h;
                return (
                  <rect
                    key={k.kind}
                    x={x}
                    y={y}
                    width={slot * 0.7}
                    height={Math.max(0, h)}
                    rx={2}
                    fill={COLORS[kinds.indexOf(k.kind) % COLORS.length]}
                  />
                );
              })}
              {i % 7 === 1 && (
                <text x={x + slot * 0.35} y={H - 8} textAnchor="middle" className="tick">
                  {d.date.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <strong>{t("bill.total", { amount: money(locale, usage.data.total_krw) })}</strong>
        {kinds.map((k, i) => (
          <span key={k} className="legend">
            <svg width="10" height="10" aria-hidden="true">
              <rect width="10" height="10" rx="2" fill={COLORS[i % COLORS.length]} />
            </svg>
            {k}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
