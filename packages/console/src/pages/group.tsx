import { useState } from "react";
import { api, unwrap, type PodGroup } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { Link, useRouter } from "../router";
import { DeleteByName } from "../fields";
import { asleep, IdleCard } from "./idle";
import { Card, ErrorNote, Notice, Spinner, StateBadge, Submit, useAction, useLoad } from "../ui";
import { AppsTabs } from "./apps-common";
import { BoundsFields, checkBounds, groupBusy } from "./groups";
import { DomainsCard } from "./domains";
import { ReleasesCard, SecretsCard } from "./pod-deploys";
import { GROUP_CHARTS, MetricsCard } from "./metrics-chart";

const path = (id: string) => ({ params: { path: { id } } });

/** Why autoscaling holds, in words: the known refusals translated, anything else as the API said it. */
function HoldNote({ hold }: { hold: string | null }) {
  const { t } = useI18n();
  if (!hold) return <p className="muted">{t("groups.scaleFree")}</p>;
  const code = /^([a-z_]+):/.exec(hold)?.[1];
  const key = `groups.hold.${code}` as MessageKey;
  const reason = code && t(key) !== key ? t(key) : hold;
  return (
    <p className="note warn" data-testid="scale-hold">
      {t("groups.hold", { reason })}
    </p>
  );
}

export function GroupPage({ id }: { id: string }) {
  const { t, locale } = useI18n();
  const { navigate } = useRouter();
  const group = useLoad(
    async () => (await unwrap(api.GET("/v1/pod-groups/{id}", path(id)))) as PodGroup,
    [id],
    (g) => (groupBusy(g) ? 1500 : 5000),
  );
  if (!group.data) return group.error ? <ErrorNote error={group.error} /> : <Spinner label={t("common.loading")} />;
  const g = group.data;
  const running = g.replicas.filter((r) => r.state === "running").length;
  return (
    <>
      <AppsTabs />
      <div className="page-head">
        <div>
          <Link to="/pod-groups" className="crumb">
            ← {t("groups.title")}
          </Link>
          <h1>
            {g.name} <StateBadge state={g.state} busy={groupBusy(g)} />
          </h1>
          <p className="muted">
            {g.size} · {when(locale, g.created_at)}
          </p>
        </div>
      </div>
      <ErrorNote error={group.error} />
      <div className="stats">
        <div className="stat">
          <span className="stat-label">{t("groups.replicas")}</span>
          <span className="stat-value">
            {running} / {g.desired_replicas}
          </span>
          <span className="muted">{t("groups.count", { n: running, min: g.replica_min, max: g.replica_max })}</span>
        </div>
        <div className="stat">
          <span className="stat-label">{t("groups.targetCpu")}</span>
          <span className="stat-value">{g.target_cpu_percent}%</span>
          <span className="muted">{t("groups.desired", { n: g.desired_replicas })}</span>
        </div>
      </div>
      <HoldNote hold={g.scale_hold} />
      {asleep(g) && (
        <p className="note" data-testid="idle-asleep">
          {t("idle.asleep")}
        </p>
      )}
      <div className="grid halves">
        <Card title={t("groups.members")}>
          {g.replicas.length === 0 ? (
            <p className="empty">{t("groups.noMembers")}</p>
          ) : (
            <ul className="rows">
              {g.replicas.map((r) => (
                <li key={r.id}>
                  <Link to={`/pods/${r.id}`}>{r.slug}</Link>
                  <span className="muted">{r.address ?? "—"}</span>
                  <StateBadge state={r.state} />
                </li>
              ))}
            </ul>
          )}
        </Card>
        <Card title={t("pods.details")}>
          <dl className="props">
            <dt>{t("pods.url")}</dt>
            <dd>
              <a href={g.url} target="_blank" rel="noreferrer noopener">
                {g.url}
              </a>
            </dd>
            <dt>{t("pods.image")}</dt>
            <dd>
              <code>{g.image}</code>
            </dd>
            <dt>{t("pods.port")}</dt>
            <dd>{g.port ?? "—"}</dd>
            <dt>{t("pods.envKeys")}</dt>
            <dd>
              {Object.keys(g.env).length
                ? Object.keys(g.env).map((k) => (
                    <span key={k} className="chip">
                      {k}
                    </span>
                  ))
                : t("pods.noEnv")}
            </dd>
          </dl>
        </Card>
      </div>
      {g.rollout && g.rollout.state !== "done" && (
        <p className={`note ${g.rollout.state === "rolled_back" ? "warn" : ""}`} data-testid="group-rollout">
          {g.rollout.state}
          {g.rollout.reason ? `: ${g.rollout.reason}` : ""}
        </p>
      )}
      <div className="grid two">
        <ReleasesCard kind="group" id={g.id} current={g.release} onChange={group.reload} />
        <SecretsCard secrets={g.secret_env} />
      </div>
      <MetricsCard path={`/v1/pod-groups/${g.id}/metrics`} charts={GROUP_CHARTS} />
      <DomainsCard slug={g.slug} />
      <div className="grid halves">
        <Scaling group={g} onSaved={(next) => group.setData(next)} />
        <IdleCard kind="group" app={g} onSaved={(next) => group.setData(next as PodGroup)} />
        <DeleteByName
          title={t("groups.delete")}
          name={g.name}
          hint={t("groups.deleteHint", { name: g.name })}
          onConfirm={async () => {
            await unwrap(api.DELETE("/v1/pod-groups/{id}", path(id)));
            navigate("/pod-groups");
          }}
        />
      </div>
    </>
  );
}

function Scaling({ group, onSaved }: { group: PodGroup; onSaved: (g: PodGroup) => void }) {
  const { t } = useI18n();
  const [b, setB] = useState({
    min: String(group.replica_min),
    max: String(group.replica_max),
    cpu: String(group.target_cpu_percent),
  });
  const [errors, setErrors] = useState<ReturnType<typeof checkBounds>>({});
  const [done, setDone] = useState(false);
  const action = useAction(async () => {
    const body = { replica_min: Number(b.min), replica_max: Number(b.max), target_cpu_percent: Number(b.cpu) };
    onSaved((await unwrap(api.PATCH("/v1/pod-groups/{id}", { ...path(group.id), body }))) as PodGroup);
    setDone(true);
  });
  return (
    <Card title={t("groups.scaling")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setDone(false);
          const errs = checkBounds(b, t);
          setErrors(errs);
          if (!Object.values(errs).some(Boolean)) void action.run();
        }}
      >
        <BoundsFields b={b} set={setB} errors={errors} />
        <ErrorNote error={action.error} />
        {done && <Notice>{t("common.saved")}</Notice>}
        <Submit busy={action.busy}>{t("common.save")}</Submit>
      </form>
    </Card>
  );
}
