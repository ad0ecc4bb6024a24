import { useState } from "react";
import { api, unwrap, type Build, type Pod, type PodGroup } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { Link, useRouter } from "../router";
import { TextField } from "../fields";
import { ListPage, PageHead } from "../lists";
import { Card, ErrorNote, Field, Submit, useAction, useEventStream, useLoad } from "../ui";
import { bytes, packFolder, putArchive } from "../upload";
import { AppsTabs } from "./apps-common";
import { ArchivePicker, UploadProgress, type Phase, type Source } from "./archive-picker";

/** the events that change what the build pages show (their live event stream, ui.tsx useEventStream) */
export const BUILD_EVENTS = ["build.succeeded", "build.failed"];
export const buildEnded = (b: Pick<Build, "status">) => ["succeeded", "failed", "cancelled"].includes(b.status);

/** A build's status in words, with a spinner while it waits or runs. */
export function BuildBadge({ build }: { build: Pick<Build, "status"> }) {
  const { t } = useI18n();
  return (
    <span className={`badge state-${build.status}`} data-state={build.status}>
      {!buildEnded(build) && <span className="spinner tiny" aria-hidden="true" />}
      {t(`build.status.${build.status}` as MessageKey)}
    </span>
  );
}

/** How long a build ran (or has been running), as "1 min 12 s". */
export function duration(b: Pick<Build, "started_at" | "finished_at">): string {
  if (!b.started_at) return "—";
  const s = Math.max(
    0,
    Math.round(((b.finished_at ? Date.parse(b.finished_at) : Date.now()) - Date.parse(b.started_at)) / 1000),
  );
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

export function BuildsPage() {
  const { t, locale } = useI18n();
  // follows the live event stream (a build's end); polled as a fallback: fast while a build runs and the stream is
  // down, slowly beside it (a build's start and steps are not events)
  let live = false;
  const list = useLoad(
    async () => (await unwrap(api.GET("/v1/builds"))) as Build[],
    [],
    (builds) => {
      const running = builds.some((b) => !buildEnded(b));
      return live ? (running ? 10_000 : 60_000) : running ? 2000 : null;
    },
  );
  live = useEventStream(BUILD_EVENTS, list.reload);
  return (
    <>
      <AppsTabs />
      <ListPage
        title={t("build.title")}
        intro={t("build.intro")}
        create={{ to: "/builds/new", label: t("build.create") }}
        list={list}
        empty={t("build.empty")}
        columns={[
          {
            head: t("build.build"),
            cell: (b) => (
              <>
                <Link to={`/builds/${b.id}`}>
                  <code>{b.id.slice(0, 8)}</code>
                </Link>
                <div className="muted small">{when(locale, b.created_at)}</div>
              </>
            ),
          },
          { head: t("sites.status"), cell: (b) => <BuildBadge build={b} /> },
          {
            head: t("build.appShort"),
            cell: (b) => (b.app ? b.app.slug : <span className="muted">{t("build.noApp")}</span>),
          },
          {
            head: t("pods.image"),
            className: "hide-sm",
            cell: (b) =>
              b.image ? (
                <code className="clip" title={b.image}>
                  {b.image.split("/").slice(-2).join("/")}
                </code>
              ) : (
                "—"
              ),
          },
          { head: t("build.duration"), className: "hide-sm", cellClass: "hide-sm num", cell: (b) => duration(b) },
        ]}
      />
    </>
  );
}

/** A path inside the build context: relative, without "..", backslashes or control characters. */
const checkPath = (p: string) => !p || (!p.startsWith("/") && !p.includes("\\") && !p.split("/").includes(".."));

export function NewBuildPage() {
  const { t } = useI18n();
  const { navigate } = useRouter();
  const [app, setApp] = useState(() => new URLSearchParams(window.location.search).get("app") ?? "");
  const [dockerfile, setDockerfile] = useState("Dockerfile");
  const [context, setContext] = useState("");
  const [source, setSource] = useState<Source | null>(null);
  const [errors, setErrors] = useState<{ dockerfile?: string; context?: string; source?: string }>({});
  const [progress, setProgress] = useState<{ phase: Phase; sent: number; total: number } | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const apps = useLoad(async () => {
    const [pods, groups] = await Promise.all([unwrap(api.GET("/v1/pods")), unwrap(api.GET("/v1/pod-groups"))]);
    return { pods: (pods as Pod[]).filter((p) => !p.group_id), groups: groups as PodGroup[] };
  }, []);
  const note = (id: string, phase: string, message: string) =>
    api.POST("/v1/builds/{id}/events", { params: { path: { id } }, body: { phase, message } }).catch(() => {});
  const action = useAction(async () => {
    if (!source) return;
    setCreated(null);
    try {
      const body = {
        ...(app ? { app } : {}),
        ...(dockerfile.trim() && dockerfile.trim() !== "Dockerfile" ? { dockerfile: dockerfile.trim() } : {}),
        ...(context.trim() ? { context_path: context.trim() } : {}),
      };
      const build = await unwrap(api.POST("/v1/builds", { body }));
      setCreated(build.id);
      let archive: Blob = source.kind === "file" ? source.file : new Blob();
      if (source.kind === "folder") {
        setProgress({ phase: "packing", sent: 0, total: 0 });
        archive = await packFolder(source.folder, true);
        const n = source.folder.files.length;
        await note(
          build.id,
          "packing",
          `packed ${n} files (${bytes(source.folder.bytes)}) into ${bytes(archive.size)}`,
        );
      }
      setProgress({ phase: "uploading", sent: 0, total: archive.size });
      const started = Date.now();
      await putArchive(build.upload_url, archive, "application/gzip", (sent, total) =>
        setProgress({ phase: "uploading", sent, total }),
      );
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      await note(build.id, "uploading", `uploaded ${bytes(archive.size)} in ${secs} s`);
      setProgress({ phase: "starting", sent: archive.size, total: archive.size });
      await unwrap(api.POST("/v1/builds/{id}/start", { params: { path: { id: build.id } } }));
      navigate(`/builds/${build.id}`);
    } finally {
      setProgress(null);
    }
  });
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const df = dockerfile.trim() || "Dockerfile";
    const ctx = context.trim().replace(/\/+$/, "");
    const inContext = ctx ? `${ctx}/${df}` : df;
    const errs = {
      dockerfile: checkPath(df) ? undefined : t("v.contextPath"),
      context: checkPath(ctx) ? undefined : t("v.contextPath"),
      source: !source
        ? t("up.required")
        : source.kind === "folder" && !source.folder.files.some((f) => f.path === inContext)
          ? t("build.noDockerfile", { path: inContext })
          : undefined,
    };
    setErrors(errs);
    if (!Object.values(errs).some(Boolean)) void action.run();
  };
  return (
    <>
      <AppsTabs />
      <PageHead title={t("build.create")} back="/builds" />
      <Card>
        <form className="narrow wide" noValidate onSubmit={submit}>
          <Field label={t("build.app")} hint={t("build.appHint")}>
            {({ id, describedBy }) => (
              <select id={id} aria-describedby={describedBy} value={app} onChange={(e) => setApp(e.target.value)}>
                <option value="">{t("build.noAppOption")}</option>
                {(apps.data?.pods ?? []).map((p) => (
                  <option key={p.id} value={p.slug}>
                    {p.name} · {t("build.kind.pod")}
                  </option>
                ))}
                {(apps.data?.groups ?? []).map((g) => (
                  <option key={g.id} value={g.slug}>
                    {g.name} · {t("build.kind.group")}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <ErrorNote error={apps.error} />
          <ArchivePicker
            accept=".tar.gz,.tgz,application/gzip"
            folderHint={t("build.folderHint")}
            fileHint={t("build.fileHint")}
            source={source}
            onChange={(s) => setSource(s)}
            error={errors.source}
          />
          <div className="field-pair">
            <TextField
              label={t("build.dockerfile")}
              error={errors.dockerfile}
              hint={t("build.dockerfileHint")}
              className="mono"
              spellCheck={false}
              autoComplete="off"
              value={dockerfile}
              onValue={setDockerfile}
            />
            <TextField
              label={t("build.context")}
              error={errors.context}
              hint={t("build.contextHint")}
              className="mono"
              placeholder="."
              spellCheck={false}
              autoComplete="off"
              value={context}
              onValue={setContext}
            />
          </div>
          {progress && <UploadProgress {...progress} />}
          <ErrorNote error={action.error} />
          {action.error && created ? (
            <p className="small">
              <Link to={`/builds/${created}`}>{t("build.seeBuild")}</Link>
            </p>
          ) : null}
          <Submit busy={action.busy}>{t("build.start")}</Submit>
        </form>
      </Card>
    </>
  );
}
