import { api, unwrap } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { Link } from "../router";
import { ListPage } from "../lists";
import { useLoad } from "../ui";
import { AppsTabs } from "./apps-common";

/** GET /v1/alert-rules's items (typed here until the SDK's schema is generated again with the alerts routes). */
interface AlertRule {
  id: string;
  name: string;
  resource: { kind: string; id: string } | null;
  metric: string;
  comparison: string;
  threshold: number;
  window_minutes: number;
  for_minutes: number;
  enabled: boolean;
  state: "ok" | "pending" | "firing";
  state_since: string;
  last_value: number | null;
}

// the alerts routes are not in the generated schema yet (npm run sdk:generate adds them): an untyped path
const get = (path: string) => (api.GET as (p: string) => Promise<{ data?: unknown; response: Response }>)(path);
const RESOURCE_PAGE: Record<string, string> = {
  pod: "/pods",
  pod_group: "/pod-groups",
  site: "/sites",
  database: "/databases",
};

/** Alert rules with their states, refreshed each 15 s (the evaluator runs each minute). */
export function AlertsPage() {
  const { t, locale } = useI18n();
  const list = useLoad(
    async () => ((await unwrap(get("/v1/alert-rules"))) as { items: AlertRule[] }).items,
    [],
    () => 15_000,
  );
  return (
    <>
      <AppsTabs />
      <ListPage
        title={t("alerts.title")}
        intro={t("alerts.intro")}
        list={list}
        empty={t("alerts.empty")}
        testId="alert-rules"
        rowData={(r) => ({ "data-state": r.state, "data-name": r.name })}
        columns={[
          {
            head: t("alerts.name"),
            cell: (r) => (
              <>
                <strong>{r.name}</strong>
                <div className="muted small">
                  {r.resource ? (
                    <Link to={`${RESOURCE_PAGE[r.resource.kind]}/${r.resource.id}`}>{r.resource.kind}</Link>
                  ) : (
                    t("alerts.all")
                  )}
                </div>
              </>
            ),
          },
          {
            head: t("alerts.condition"),
            cell: (r) => (
              <>
                <code>
                  {r.metric} {r.comparison} {r.threshold}
                </code>{" "}
                <span className="muted small">
                  {r.window_minutes} min · {t("alerts.for", { n: r.for_minutes })}
                </span>
              </>
            ),
          },
          {
            head: t("alerts.state"),
            cell: (r) => (
              <>
                <span className={`badge state-${r.state}`} data-state={r.state}>
                  {r.enabled ? t(`alerts.state.${r.state}` as MessageKey) : t("alerts.disabled")}
                </span>
                <div className="muted small">{t("alerts.since", { when: when(locale, r.state_since) })}</div>
              </>
            ),
          },
          {
            head: t("alerts.value"),
            className: "hide-sm",
            cell: (r) => (r.last_value === null ? "—" : String(r.last_value)),
          },
        ]}
      />
    </>
  );
}
