import { useState } from "react";
import { api, unwrap } from "../api";
import { useI18n, when } from "../i18n";
import { Link, useRouter } from "../router";
import { DeleteByName, TextField } from "../fields";
import { ListPage, ResourceTable } from "../lists";
import { Card, ErrorNote, Field, Spinner, StateBadge, Submit, useAction, useLoad } from "../ui";
import { AppsTabs, IMAGE, joinArgs, SLUG, splitArgs } from "./apps-common";

const path = (id: string) => ({ params: { path: { id } } });
type CronJob = Awaited<ReturnType<typeof loadJob>>;
const loadJob = async (id: string) => unwrap(api.GET("/v1/cron-jobs/{id}", path(id)));

/** Cron jobs (issue 29): the list, and a form that makes one. */
export function CronJobsPage() {
  const { t, locale } = useI18n();
  const list = useLoad(
    async () => (await unwrap(api.GET("/v1/cron-jobs"))) as CronJob[],
    [],
    () => 10_000,
  );
  return (
    <>
      <AppsTabs />
      <ListPage
        title={t("cron.title")}
        intro={t("cron.intro")}
        list={list}
        empty={t("cron.empty")}
        testId="cron-jobs"
        columns={[
          { head: t("cron.name"), cell: (j) => <Link to={`/cron-jobs/${j.id}`}>{j.name}</Link> },
          {
            head: t("cron.schedule"),
            cell: (j) => (
              <>
                <code>{j.schedule}</code> <span className="muted">{j.time_zone}</span>
              </>
            ),
          },
          {
            head: t("cron.next"),
            className: "hide-sm",
            cell: (j) => (j.suspended ? t("cron.suspended") : j.next_run_at ? when(locale, j.next_run_at) : "—"),
          },
          { head: t("cron.image"), className: "hide-sm", cell: (j) => <code className="clip">{j.image}</code> },
        ]}
      />
      <NewCronJob onCreated={list.reload} />
    </>
  );
}

function NewCronJob({ onCreated }: { onCreated: () => void }) {
  const { t } = useI18n();
  const [f, setF] = useState({
    name: "",
    image: "",
    command: "",
    schedule: "*/5 * * * *",
    time_zone: "UTC",
    policy: "forbid",
  });
  const [errors, setErrors] = useState<Record<string, string | undefined>>({});
  const set = (k: keyof typeof f) => (v: string) => setF((cur) => ({ ...cur, [k]: v }));
  const action = useAction(async () => {
    await unwrap(
      api.POST("/v1/cron-jobs", {
        body: {
          name: f.name,
          image: f.image.trim(),
          command: splitArgs(f.command)!,
          schedule: f.schedule.trim(),
          time_zone: f.time_zone.trim() || "UTC",
          concurrency_policy: f.policy as "forbid" | "replace" | "allow",
        },
      }),
    );
    setF((cur) => ({ ...cur, name: "", command: "" }));
    onCreated();
  });
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const args = splitArgs(f.command);
    const errs = {
      name: !f.name ? t("v.required") : SLUG.test(f.name) ? undefined : t("v.slug"),
      image: IMAGE.test(f.image.trim()) ? undefined : t("v.image"),
      command: args && args.length ? undefined : t("v.required"),
      schedule: f.schedule.trim() ? undefined : t("v.required"),
    };
    setErrors(errs);
    if (!Object.values(errs).some(Boolean)) void action.run();
  };
  return (
    <Card title={t("cron.create")}>
      <form className="narrow wide" noValidate onSubmit={submit} data-testid="new-cron-job">
        <TextField
          label={t("cron.name")}
          name="cron-name"
          lower
          autoComplete="off"
          value={f.name}
          onValue={set("name")}
          error={errors.name}
        />
        <TextField
          label={t("cron.image")}
          name="cron-image"
          spellCheck={false}
          value={f.image}
          onValue={set("image")}
          error={errors.image}
        />
        <TextField
          label={t("cron.command")}
          name="cron-command"
          spellCheck={false}
          hint={t("cron.commandHint")}
          value={f.command}
          onValue={set("command")}
          error={errors.command}
        />
        <TextField
          label={t("cron.schedule")}
          name="cron-schedule"
          hint={t("cron.scheduleHint")}
          value={f.schedule}
          onValue={set("schedule")}
          error={errors.schedule}
        />
        <TextField label={t("cron.timeZone")} name="cron-tz" value={f.time_zone} onValue={set("time_zone")} />
        <Field label={t("cron.policy")}>
          {({ id }) => (
            <select id={id} value={f.policy} onChange={(e) => set("policy")(e.target.value)}>
              <option value="forbid">forbid</option>
              <option value="replace">replace</option>
              <option value="allow">allow</option>
            </select>
          )}
        </Field>
        <ErrorNote error={action.error} />
        <Submit busy={action.busy}>{t("cron.create")}</Submit>
      </form>
    </Card>
  );
}

const seconds = (ms: number | null) => (ms === null ? "—" : `${(ms / 1000).toFixed(1)} s`);

/** One cron job: its spec, run now, its runs with exit code, duration and logs, deletion. */
export function CronJobPage({ id }: { id: string }) {
  const { t, locale } = useI18n();
  const { navigate } = useRouter();
  const job = useLoad(() => loadJob(id), [id]);
  const runs = useLoad(
    async () => unwrap(api.GET("/v1/cron-jobs/{id}/runs", path(id))),
    [id],
    (rs) => (rs.some((r) => r.state === "running") ? 1000 : 5000),
  );
  const [shown, setShown] = useState<{ id: string; lines: string[] } | null>(null);
  const runNow = useAction(async () => {
    await unwrap(api.POST("/v1/cron-jobs/{id}/run", path(id)));
    runs.reload();
  });
  const logs = useAction(async (runId: string) => {
    const r = await unwrap(
      api.GET("/v1/cron-jobs/{id}/runs/{run_id}/logs", { params: { path: { id, run_id: runId } } }),
    );
    setShown({ id: runId, lines: r.lines });
  });
  if (!job.data) return job.error ? <ErrorNote error={job.error} /> : <Spinner label={t("common.loading")} />;
  const j = job.data;
  return (
    <>
      <AppsTabs />
      <div className="page-head">
        <div>
          <Link to="/cron-jobs" className="crumb">
            ← {t("cron.title")}
          </Link>
          <h1>{j.name}</h1>
          <p className="muted">
            <code>{j.schedule}</code> · {j.time_zone} · <code>{joinArgs(j.command)}</code>
          </p>
        </div>
        <div className="actions">
          <button type="button" className="btn" disabled={runNow.busy} onClick={() => void runNow.run()}>
            {t("cron.runNow")}
          </button>
        </div>
      </div>
      <ErrorNote error={runNow.error || runs.error || logs.error} />
      <Card title={t("cron.runs")}>
        {!runs.data ? (
          <Spinner label={t("common.loading")} />
        ) : runs.data.length === 0 ? (
          <p className="muted">{t("cron.noRuns")}</p>
        ) : (
          <ResourceTable
            testId="cron-runs"
            rows={runs.data}
            rowData={(r) => ({ "data-state": r.state })}
            columns={[
              { head: t("dep.when"), cell: (r) => when(locale, r.scheduled_at) },
              { head: t("cron.state"), cell: (r) => <StateBadge state={r.state} busy={r.state === "running"} /> },
              { head: t("cron.exitCode"), cell: (r) => (r.exit_code === null ? "—" : r.exit_code) },
              { head: t("cron.duration"), className: "hide-sm", cell: (r) => seconds(r.duration_ms) },
              {
                head: t("cron.logs"),
                cell: (r) => (
                  <button type="button" className="btn small" onClick={() => void logs.run(r.id)}>
                    {t("cron.showLogs")}
                  </button>
                ),
              },
            ]}
          />
        )}
        {shown && (
          <pre className="log" data-testid="cron-run-logs">
            {shown.lines.join("\n")}
          </pre>
        )}
      </Card>
      <DeleteByName
        title={t("cron.delete")}
        name={j.name}
        hint={t("pods.deleteHint", { name: j.name })}
        onConfirm={async () => {
          await unwrap(api.DELETE("/v1/cron-jobs/{id}", path(id)));
          navigate("/cron-jobs");
        }}
      />
    </>
  );
}
