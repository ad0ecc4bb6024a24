import { api, unwrap, type Pod } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { ResourceTable } from "../lists";
import { Card, ErrorNote, Spinner, useAction, useEventStream, useLoad } from "../ui";
import { POD_EVENTS } from "./apps-common";

const path = (id: string) => ({ params: { path: { id } } });

/** Each declared check's state, with the last failure's reason (issue 29). */
export function ChecksCard({ pod }: { pod: Pod }) {
  const { t, locale } = useI18n();
  const kinds = Object.keys(pod.check_status ?? {});
  return (
    <Card title={t("dep.checks")}>
      {kinds.length === 0 && !pod.checks ? (
        <p className="muted">{t("dep.noChecks")}</p>
      ) : (
        <dl className="props" data-testid="checks">
          {kinds.map((kind) => {
            const s = pod.check_status[kind];
            return (
              <div key={kind} data-check={kind} data-state={s.state}>
                <dt>{kind}</dt>
                <dd>
                  <span className={`badge ${s.state === "failing" ? "error" : ""}`}>
                    {t(`dep.check.${s.state}` as MessageKey)}
                  </span>
                  {s.last_failure && (
                    <p className="muted small">
                      {t("dep.lastFailure", { at: when(locale, s.last_failure.at), reason: s.last_failure.reason })}
                    </p>
                  )}
                </dd>
              </div>
            );
          })}
        </dl>
      )}
    </Card>
  );
}

/** A rollout under way, or the last automatic rollback with its reason and the failed replica's last lines. */
export function RolloutNote({ rollout, release }: { rollout: Pod["rollout"]; release: number }) {
  const { t } = useI18n();
  if (rollout.state === "rolling")
    return (
      <p className="note" data-testid="rollout" data-state="rolling">
        {t("dep.rolling", { release })}
      </p>
    );
  if (rollout.state !== "rollback" || !rollout.rollback) return null;
  const r = rollout.rollback;
  return (
    <div className="note warn" data-testid="rollout" data-state="rollback">
      <p>{t("dep.rolledBack", { from: r.from_release, to: r.to_release, reason: r.reason })}</p>
      {r.log_lines.length > 0 && (
        <details>
          <summary>{t("dep.lastLines")}</summary>
          <pre className="log">{r.log_lines.join("\n")}</pre>
        </details>
      )}
    </div>
  );
}

/** Secret env: names with fingerprints and who set each when; values never come back from the API. */
export function SecretsCard({ secrets }: { secrets: Pod["secret_env"] }) {
  const { t, locale } = useI18n();
  const names = Object.keys(secrets ?? {});
  return (
    <Card title={t("dep.secrets")}>
      {names.length === 0 ? (
        <p className="muted">{t("dep.noSecrets")}</p>
      ) : (
        <dl className="props" data-testid="secrets">
          {names.map((n) => (
            <div key={n}>
              <dt>
                <code>{n}</code>
              </dt>
              <dd>
                <code className="clip" title={secrets[n].fingerprint}>
                  {secrets[n].fingerprint}
                </code>
                <p className="muted small">
                  {t("dep.setBy", { who: secrets[n].set_by, at: when(locale, secrets[n].set_at) })}
                </p>
              </dd>
            </div>
          ))}
        </dl>
      )}
    </Card>
  );
}

interface ReleaseRow {
  number: number;
  changed: string[];
  description: string;
  outcome: string;
  outcome_reason: string | null;
  created_at: string;
}

/**
 * A pod's or group's numbered releases, newest first, each earlier one with a Roll back button: the same safe
 * rollout as any change (the current version serves until the release rolled back to is ready).
 */
export function ReleasesCard({
  kind,
  id,
  current,
  onChange,
}: {
  kind: "pod" | "group";
  id: string;
  /** the release the app runs now: no button on it */
  current: number;
  onChange: () => void;
}) {
  const { t, locale } = useI18n();
  let live = false;
  const list = useLoad(
    async () =>
      (
        (kind === "pod"
          ? await unwrap(api.GET("/v1/pods/{id}/releases", path(id)))
          : await unwrap(api.GET("/v1/pod-groups/{id}/releases", path(id)))) as ReleaseRow[]
      ).map((r) => ({
        ...r,
        id: String(r.number),
      })),
    [kind, id, current],
    // a rollout's end comes on the live event stream; polled beside it slowly, and every 5 s while it is down
    () => (live ? 30_000 : 5000),
  );
  live = useEventStream(POD_EVENTS, list.reload);
  const back = useAction(async (release: number) => {
    if (kind === "pod") await unwrap(api.POST("/v1/pods/{id}/rollback", { ...path(id), body: { release } }));
    else await unwrap(api.POST("/v1/pod-groups/{id}/rollback", { ...path(id), body: { release } }));
    list.reload();
    onChange();
  });
  return (
    <Card title={t("dep.releases")}>
      <ErrorNote error={back.error || list.error} />
      {!list.data ? (
        <Spinner label={t("common.loading")} />
      ) : list.data.length === 0 ? (
        <p className="muted">{t("dep.noReleases")}</p>
      ) : (
        <ResourceTable
          testId="releases"
          rows={list.data}
          rowData={(r) => ({ "data-release": r.id, "data-outcome": r.outcome })}
          columns={[
            { head: t("dep.release"), cell: (r) => r.number },
            { head: t("dep.changed"), cell: (r) => r.description },
            {
              head: t("dep.outcome"),
              cell: (r) => <span title={r.outcome_reason ?? undefined}>{r.outcome}</span>,
            },
            { head: t("dep.when"), className: "hide-sm", cell: (r) => when(locale, r.created_at) },
            {
              head: "",
              cell: (r) =>
                r.number !== current && (
                  <button
                    type="button"
                    className="btn small"
                    disabled={back.busy}
                    aria-label={t("dep.rollbackTo", { n: r.number })}
                    onClick={() => void back.run(r.number)}
                  >
                    {t("dep.rollback")}
                  </button>
                ),
            },
          ]}
        />
      )}
    </Card>
  );
}
