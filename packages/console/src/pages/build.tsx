import { useEffect, useRef, useState } from "react";
import { api, unwrap, type BuildDetail } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { Link } from "../router";
import { CopyField } from "../fields";
import { Card, ErrorNote, Field, Spinner, Submit, useAction, useEventStream, useLoad } from "../ui";
import { bytes } from "../upload";
import { appPath } from "./all-domains";
import { AppsTabs } from "./apps-common";
import { BUILD_EVENTS, BuildBadge, buildEnded, duration } from "./builds";

const path = (id: string) => ({ params: { path: { id } } });

/** One build, followed live until it ends: its step, the builder's log, the image and digest, cancel. */
export function BuildPage({ id }: { id: string }) {
  const { t, locale } = useI18n();
  // the builder's log is read each second while the build runs (log lines are not events); its end comes on the
  // live event stream, so the outcome shows at once, and with the stream open the log is read every 2 s
  let live = false;
  const build = useLoad(
    async () => (await unwrap(api.GET("/v1/builds/{id}", path(id)))) as BuildDetail,
    [id],
    (b) => (buildEnded(b) ? null : live ? 2000 : 1000),
  );
  live = useEventStream(BUILD_EVENTS, build.reload);
  if (!build.data) return build.error ? <ErrorNote error={build.error} /> : <Spinner label={t("common.loading")} />;
  const b = build.data;
  const running = !buildEnded(b);
  const phase = b.phase ? t(`build.phase.${b.phase}` as MessageKey) : null;
  const step =
    b.status === "queued"
      ? t("build.queued")
      : b.status === "awaiting_upload"
        ? t("build.awaiting")
        : phase && phase !== `build.phase.${b.phase}`
          ? phase
          : t("build.building");
  return (
    <>
      <AppsTabs />
      <div className="page-head">
        <div>
          <Link to="/builds" className="crumb">
            ← {t("build.title")}
          </Link>
          <h1>
            {t("build.heading", { id: b.id.slice(0, 8) })} <BuildBadge build={b} />
          </h1>
          <p className="muted">
            {when(locale, b.created_at)} · {t("build.took", { time: duration(b) })}
          </p>
        </div>
      </div>
      <ErrorNote error={build.error} />
      {running && (
        <div className="progress" role="status" aria-live="polite" data-testid="build-progress">
          <Spinner label={step} />
          <span className="live">{t("db.live")}</span>
          <div className="bar" aria-hidden="true" />
        </div>
      )}
      {b.status_reason && (
        <p className={`note ${b.status === "failed" ? "error" : "warn"}`} data-testid="status-reason">
          {b.status_reason}
        </p>
      )}
      {b.deploy_error && <p className="note error">{t("build.deployError", { error: b.deploy_error })}</p>}
      <div className="grid halves">
        <Card title={t("pods.details")}>
          <dl className="props">
            <CopyField term={t("pods.image")} value={b.image} testId="build-image" />
            <CopyField term={t("build.digest")} value={b.digest} testId="build-digest" />
            <dt>{t("build.appShort")}</dt>
            <dd>
              {b.app ? (
                <>
                  <Link to={appPath(b.app)}>{b.app.slug}</Link>
                  <span className="muted"> · {t(`build.kind.${b.app.kind}` as MessageKey)}</span>
                </>
              ) : (
                <span className="muted">{t("build.noApp")}</span>
              )}
            </dd>
            {b.deployed_at && (
              <>
                <dt>{t("build.deployed")}</dt>
                <dd>{when(locale, b.deployed_at)}</dd>
              </>
            )}
            <dt>{t("build.dockerfile")}</dt>
            <dd>
              <code>{b.dockerfile}</code>
              {b.context_path && b.context_path !== "." && <span className="muted"> · {b.context_path}</span>}
            </dd>
            <dt>{t("build.source")}</dt>
            <dd>{b.source_bytes !== null ? bytes(b.source_bytes, locale) : "—"}</dd>
            <dt>{t("build.started")}</dt>
            <dd>{when(locale, b.started_at)}</dd>
            <dt>{t("build.finished")}</dt>
            <dd>{when(locale, b.finished_at)}</dd>
          </dl>
        </Card>
        <div className="stack">
          {running && <CancelBuild id={b.id} onCancelled={build.reload} />}
          {b.cancel && (
            <Card title={t("build.cancelled")}>
              <p>{b.cancel.reason || t("build.noReason")}</p>
            </Card>
          )}
          <Events build={b} />
        </div>
      </div>
      <BuildLogs build={b} />
    </>
  );
}

function CancelBuild({ id, onCancelled }: { id: string; onCancelled: () => void }) {
  const { t } = useI18n();
  const [reason, setReason] = useState("");
  const action = useAction(async () => {
    const body = reason.trim() ? { reason: reason.trim() } : {};
    await unwrap(api.POST("/v1/builds/{id}/cancel", { ...path(id), body }));
    onCancelled();
  });
  return (
    <Card title={t("build.cancel")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void action.run();
        }}
      >
        <Field label={t("build.reason")} hint={t("build.reasonHint")}>
          {({ id, describedBy }) => (
            <input
              id={id}
              maxLength={500}
              autoComplete="off"
              aria-describedby={describedBy}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
            />
          )}
        </Field>
        <ErrorNote error={action.error} />
        <Submit busy={action.busy} kind="danger">
          {t("build.cancel")}
        </Submit>
      </form>
    </Card>
  );
}

/** Steps the client recorded (packing, uploading), oldest first. */
function Events({ build }: { build: BuildDetail }) {
  const { t, locale } = useI18n();
  if (build.events.length === 0) return null;
  return (
    <Card title={t("build.events")}>
      <ul className="rows">
        {build.events.map((e) => (
          <li key={e.id}>
            <div className="row-main">
              <span>
                <span className={`badge${e.level === "error" ? " state-failed" : ""}`}>{e.phase}</span> {e.message}
              </span>
            </div>
            <span className="muted small">{when(locale, e.created_at)}</span>
          </li>
        ))}
      </ul>
    </Card>
  );
}

/** The builder's log as the build page's polls bring it; kept scrolled to the end unless the reader scrolls up. */
function BuildLogs({ build }: { build: BuildDetail }) {
  const { t } = useI18n();
  const box = useRef<HTMLPreElement>(null);
  const atEnd = useRef(true);
  const running = !buildEnded(build);
  useEffect(() => {
    if (atEnd.current && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [build.logs]);
  return (
    <Card
      title={t("build.logs")}
      actions={
        running && (
          <span className="live-dot" role="status">
            {t("pods.logsLive")}
          </span>
        )
      }
    >
      {build.logs_dropped > 0 && <p className="hint">{t("build.logsDropped", { n: build.logs_dropped })}</p>}
      <pre
        className="logs tall"
        ref={box}
        role="log"
        aria-label={t("build.logs")}
        tabIndex={0}
        data-testid="build-logs"
        onScroll={(e) => {
          const el = e.currentTarget;
          atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {build.logs ? build.logs : <span className="muted">{t("build.logsEmpty")}</span>}
      </pre>
    </Card>
  );
}
