import { useState } from "react";
import { api, unwrap, type Db } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { Link, useRouter } from "../router";
import { DeleteByName } from "../fields";
import { Card, ErrorNote, Secret, Spinner, StateBadge, useAction, useEventStream, useLoad } from "../ui";
import { BUSY_STATES, DATABASE_EVENTS, justCreated } from "./databases";
import { AllowlistEditor, HaAndPool } from "./database-settings";
import { DATABASE_CHARTS, MetricsCard } from "./metrics-chart";

const path = (id: string) => ({ params: { path: { id } } });

/** One database: state followed live, connection strings revealed once, operations with their progress. */
export function DatabasePage({ id }: { id: string }) {
  const { t, locale } = useI18n();
  const { navigate } = useRouter();
  const [secrets, setSecrets] = useState<Db | null>(() => {
    const created = justCreated.get(id) ?? null;
    justCreated.delete(id);
    return created;
  });
  // the live event stream reloads it on a change of state; commands in flight (no event each) are still polled,
  // and everything is while the stream is down
  let live = false;
  const db = useLoad(
    async () => (await unwrap(api.GET("/v1/databases/{id}", path(id)))) as Db,
    [id],
    (d) =>
      (d.commands ?? []).some((c) => c.status === "queued" || c.status === "running")
        ? 1000
        : BUSY_STATES.includes(d.state)
          ? live
            ? 10_000
            : 1000
          : null,
  );
  live = useEventStream(DATABASE_EVENTS, db.reload);
  const act = useAction(async (what: "stop" | "start" | "backup" | "rotate" | "reveal") => {
    if (what === "stop") await unwrap(api.POST("/v1/databases/{id}/stop", path(id)));
    if (what === "start") await unwrap(api.POST("/v1/databases/{id}/start", path(id)));
    if (what === "backup") await unwrap(api.POST("/v1/databases/{id}/backup", { ...path(id), body: {} }));
    if (what === "rotate") {
      if (!window.confirm(t("db.rotateConfirm"))) return;
      setSecrets((await unwrap(api.POST("/v1/databases/{id}/rotate-password", path(id)))) as Db);
    }
    if (what === "reveal")
      setSecrets((await unwrap(api.POST("/v1/databases/{id}/initial-credentials", path(id)))) as Db);
    db.reload();
  });

  if (!db.data) return db.error ? <ErrorNote error={db.error} /> : <Spinner label={t("common.loading")} />;
  const d = db.data;
  const busy = BUSY_STATES.includes(d.state);
  const pending = (d.commands ?? []).filter((c) => c.status === "queued" || c.status === "running");
  return (
    <>
      <div className="page-head">
        <div>
          <Link to="/databases" className="crumb">
            ← {t("db.title")}
          </Link>
          <h1>
            {d.name} <StateBadge state={d.state} />
          </h1>
          <p className="muted">
            PostgreSQL {d.version} · {d.size} · {d.storage_gb} GB · {when(locale, d.created_at)}
          </p>
        </div>
        <div className="actions">
          {/* only dev databases can be stopped (stop_not_supported otherwise) */}
          {d.state === "running" && d.size === "dev" && (
            <button type="button" className="btn" disabled={act.busy} onClick={() => void act.run("stop")}>
              {t("db.stop")}
            </button>
          )}
          {d.state === "paused" && (
            <button type="button" className="btn" disabled={act.busy} onClick={() => void act.run("start")}>
              {t("db.start")}
            </button>
          )}
          <button
            type="button"
            className="btn"
            disabled={act.busy || d.state !== "running"}
            onClick={() => void act.run("backup")}
          >
            {t("db.backup")}
          </button>
          <button
            type="button"
            className="btn"
            disabled={act.busy || d.state !== "running"}
            onClick={() => void act.run("rotate")}
          >
            {t("db.rotate")}
          </button>
        </div>
      </div>
      <ErrorNote error={act.error || db.error} />
      {(busy || pending.length > 0) && (
        <div className="progress" role="status" aria-live="polite">
          <Spinner label={busy ? t("db.creating") : t("db.queued", { kind: pending[0].kind })} />
          <span className="live">{t("db.live")}</span>
          <div className="bar" aria-hidden="true" />
        </div>
      )}
      {d.status_reason && <p className="note error">{d.status_reason}</p>}
      <div className="grid two">
        <Card title={t("db.connection")}>
          <dl className="props">
            <dt>{t("db.host")}</dt>
            <dd>
              <code>
                {d.public_host ?? d.host}:{d.port}
              </code>
            </dd>
            <dt>{t("db.user")}</dt>
            <dd>
              <code>{d.user}</code>
            </dd>
            <dt>{t("db.database")}</dt>
            <dd>
              <code>{d.database}</code>
            </dd>
          </dl>
          {secrets?.database_url ? (
            <>
              <p className="note warn">{t("db.revealHint")}</p>
              <Secret label={t("db.url")} value={secrets.database_url} />
              {secrets.database_url_public && <Secret label={t("db.urlPublic")} value={secrets.database_url_public} />}
              {secrets.superuser_database_url && (
                <Secret label={t("db.superUrl")} value={secrets.superuser_database_url} />
              )}
            </>
          ) : (
            <button
              type="button"
              className="btn primary"
              disabled={act.busy || d.state !== "running"}
              onClick={() => void act.run("reveal")}
            >
              {t("db.reveal")}
            </button>
          )}
        </Card>
        <Card title={t("db.backups")}>
          {(d.backups ?? []).length === 0 ? (
            <p className="empty">{t("db.noBackups")}</p>
          ) : (
            <ul className="rows">
              {(d.backups ?? []).slice(0, 8).map((b) => (
                <li key={b.id}>
                  <span>{b.label ?? b.kind}</span>
                  <span className="muted">{when(locale, b.finished_at ?? b.started_at)}</span>
                  <span className={`badge state-${b.status}`}>{t(`status.${b.status}` as MessageKey)}</span>
                </li>
              ))}
            </ul>
          )}
          {(d.commands ?? []).length > 0 && (
            <>
              <h3>{t("db.commands")}</h3>
              <ul className="rows">
                {(d.commands ?? []).slice(0, 5).map((c) => (
                  <li key={c.id}>
                    <span>{c.kind}</span>
                    <span className="muted">{when(locale, c.created_at)}</span>
                    <span className={`badge state-${c.status}`}>{t(`status.${c.status}` as MessageKey)}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </Card>
        <AllowlistEditor db={d} onSaved={db.reload} />
        <HaAndPool db={d} />
        <DeleteByName
          title={t("db.delete")}
          name={d.name}
          hint={t("db.deleteHint", { name: d.name })}
          onConfirm={async () => {
            await unwrap(api.DELETE("/v1/databases/{id}", path(id)));
            navigate("/databases");
          }}
        />
      </div>
      <MetricsCard path={`/v1/databases/${d.id}/metrics`} charts={DATABASE_CHARTS} />
    </>
  );
}
