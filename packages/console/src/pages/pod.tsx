import { useState } from "react";
import { api, unwrap, type Pod } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { Link, useRouter } from "../router";
import { DeleteByName, TextField } from "../fields";
import { Card, ErrorNote, Spinner, StateBadge, Submit, useAction, useEventStream, useLoad } from "../ui";
import { AppsTabs, IMAGE, joinArgs, podBusy, POD_EVENTS } from "./apps-common";
import { PodExec, PodLogs } from "./pod-console";
import { DomainsCard } from "./domains";
import { asleep, IdleCard, shownState } from "./idle";
import { ChecksCard, ReleasesCard, RolloutNote, SecretsCard } from "./pod-deploys";
import { MetricsCard, POD_CHARTS } from "./metrics-chart";

const path = (id: string) => ({ params: { path: { id } } });

/** One pod: its state followed live, actions, a rolling image change, live logs, a command box, deletion. */
export function PodPage({ id }: { id: string }) {
  const { t, locale } = useI18n();
  const { navigate } = useRouter();
  // the live event stream reloads it; the poll is the fallback (slow beside an open stream)
  let live = false;
  const pod = useLoad(
    async () => (await unwrap(api.GET("/v1/pods/{id}", path(id)))) as Pod,
    [id],
    (p) => (live ? (podBusy(p) ? 5000 : 30_000) : podBusy(p) ? 1000 : 4000),
  );
  live = useEventStream(POD_EVENTS, pod.reload);
  const act = useAction(async (what: "start" | "stop" | "restart") => {
    const p = path(id);
    const next =
      what === "start"
        ? await unwrap(api.POST("/v1/pods/{id}/start", p))
        : what === "stop"
          ? await unwrap(api.POST("/v1/pods/{id}/stop", p))
          : await unwrap(api.POST("/v1/pods/{id}/restart", p));
    pod.setData(next as Pod);
    pod.reload();
  });

  if (!pod.data) return pod.error ? <ErrorNote error={pod.error} /> : <Spinner label={t("common.loading")} />;
  const p = pod.data;
  const busy = podBusy(p);
  const rolling = p.state === "running" && p.serving_generation !== null && p.serving_generation !== p.generation;
  const progress =
    p.state === "creating"
      ? t("pods.creating")
      : rolling
        ? t("pods.rolling", { gen: p.generation })
        : t("pods.changing", { state: t(`state.${p.desired_state}` as MessageKey) });
  return (
    <>
      <AppsTabs />
      <div className="page-head">
        <div>
          <Link to="/pods" className="crumb">
            ← {t("pods.title")}
          </Link>
          <h1>
            {p.name} <StateBadge state={shownState(p)} busy={busy} />
          </h1>
          <p className="muted">
            {p.size} · {when(locale, p.created_at)}
          </p>
        </div>
        <div className="actions">
          {(p.desired_state === "stopped" || asleep(p) || p.state === "failed") && (
            <button type="button" className="btn" disabled={act.busy} onClick={() => void act.run("start")}>
              {t("pods.start")}
            </button>
          )}
          {asleep(p) && (
            <button type="button" className="btn" disabled={act.busy} onClick={() => void act.run("stop")}>
              {t("pods.stop")}
            </button>
          )}
          {p.desired_state === "running" && (
            <>
              <button type="button" className="btn" disabled={act.busy} onClick={() => void act.run("restart")}>
                {t("pods.restart")}
              </button>
              <button type="button" className="btn" disabled={act.busy} onClick={() => void act.run("stop")}>
                {t("pods.stop")}
              </button>
            </>
          )}
        </div>
      </div>
      <ErrorNote error={act.error || pod.error} />
      {busy && (
        <div className="progress" role="status" aria-live="polite">
          <Spinner label={progress} />
          <span className="live">{t("db.live")}</span>
          <div className="bar" aria-hidden="true" />
        </div>
      )}
      {asleep(p) && (
        <p className="note" data-testid="idle-asleep">
          {t("idle.asleep")}
        </p>
      )}
      {p.state_reason && !asleep(p) && (
        <p className={`note ${p.state === "failed" ? "error" : "warn"}`} data-testid="state-reason">
          {p.state_reason}
        </p>
      )}
      <RolloutNote rollout={p.rollout} release={p.release} />
      <div className="grid two">
        <Card title={t("pods.details")}>
          <dl className="props">
            <dt>{t("pods.url")}</dt>
            <dd>
              <a href={p.url} target="_blank" rel="noreferrer noopener">
                {p.url}
              </a>
            </dd>
            <dt>{t("pods.address")}</dt>
            <dd>{p.address ? <code>{p.address}</code> : "—"}</dd>
            <dt>{t("pods.image")}</dt>
            <dd>
              <code>{p.image}</code>
            </dd>
            <dt>{t("pods.port")}</dt>
            <dd>{p.port ?? "—"}</dd>
            {p.command && (
              <>
                <dt>{t("pods.execCommand")}</dt>
                <dd>
                  <code>{joinArgs(p.command)}</code>
                </dd>
              </>
            )}
            <dt>{t("pods.generation")}</dt>
            <dd>
              {p.generation}
              {p.serving_generation !== null && p.serving_generation !== p.generation && (
                <span className="muted"> (→ {p.serving_generation})</span>
              )}
            </dd>
            <dt>{t("pods.restarts")}</dt>
            <dd>{p.restart_count}</dd>
            {p.group_id && (
              <>
                <dt>{t("pods.group")}</dt>
                <dd>
                  <Link to={`/pod-groups/${p.group_id}`}>{p.group_id.slice(0, 8)}</Link>
                </dd>
              </>
            )}
          </dl>
        </Card>
        <div className="stack">
          <Card title={t("pods.envKeys")}>
            {Object.keys(p.env).length === 0 ? (
              <p className="muted">{t("pods.noEnv")}</p>
            ) : (
              <p>
                {Object.keys(p.env).map((k) => (
                  <span key={k} className="chip">
                    {k}
                  </span>
                ))}
              </p>
            )}
          </Card>
          <SecretsCard secrets={p.secret_env} />
          <ChangeImage pod={p} onChanged={(next) => pod.setData(next)} />
          {/* a group's member sleeps and wakes with its group */}
          {!p.group_id && <IdleCard kind="pod" app={p} onSaved={(next) => pod.setData(next as Pod)} />}
        </div>
      </div>
      <div className="grid two">
        <ChecksCard pod={p} />
        {/* a group's member follows its group's releases */}
        {!p.group_id && <ReleasesCard kind="pod" id={p.id} current={p.release} onChange={pod.reload} />}
      </div>
      <MetricsCard path={`/v1/pods/${p.id}/metrics`} charts={POD_CHARTS} />
      <PodLogs pod={p} />
      <PodExec pod={p} />
      {/* a group's member is reached through its group: domains belong to the group */}
      {!p.group_id && <DomainsCard slug={p.slug} />}
      <DeleteByName
        title={t("pods.delete")}
        name={p.name}
        hint={t("pods.deleteHint", { name: p.name })}
        onConfirm={async () => {
          await unwrap(api.DELETE("/v1/pods/{id}", path(id)));
          navigate("/pods");
        }}
      />
    </>
  );
}

/** A new image for the pod: a rolling update, followed by the page's progress bar until it serves. */
function ChangeImage({ pod, onChanged }: { pod: Pod; onChanged: (p: Pod) => void }) {
  const { t } = useI18n();
  const [image, setImage] = useState("");
  const [invalid, setInvalid] = useState<string | null>(null);
  const action = useAction(async () => {
    onChanged((await unwrap(api.PATCH("/v1/pods/{id}", { ...path(pod.id), body: { image: image.trim() } }))) as Pod);
    setImage("");
  });
  return (
    <Card title={t("pods.changeImage")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const bad = !image.trim() ? t("v.required") : IMAGE.test(image.trim()) ? null : t("v.image");
          setInvalid(bad);
          if (!bad) void action.run();
        }}
      >
        <TextField
          label={t("pods.image")}
          error={invalid}
          hint={t("pods.changeImageHint")}
          name="new-image"
          spellCheck={false}
          autoComplete="off"
          placeholder={pod.image}
          value={image}
          onValue={setImage}
        />
        <ErrorNote error={action.error} />
        <Submit busy={action.busy}>{t("pods.deploy")}</Submit>
      </form>
    </Card>
  );
}
