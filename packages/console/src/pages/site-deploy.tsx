import { useState } from "react";
import { api, unwrap, type Deployment } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { Loaded, ResourceTable, RowButton, srOnly } from "../lists";
import { Card, ErrorNote, Notice, Submit, useAction, useLoad } from "../ui";
import { archiveType, bytes, packFolder, putArchive } from "../upload";
import { ArchivePicker, UploadProgress, type Phase, type Source } from "./archive-picker";

const site = (slug: string) => ({ params: { path: { slug } } });
const dep = (slug: string, id: string) => ({ params: { path: { slug, id } } });

/**
 * A new deployment: a folder packed into a tar.gz in the page (or an archive file as it is), uploaded with its
 * progress shown, then made live at once unless the user wants to check it first.
 */
export function DeployCard({ slug, onDeployed }: { slug: string; onDeployed: () => void }) {
  const { t, locale } = useI18n();
  const [source, setSource] = useState<Source | null>(null);
  const [goLive, setGoLive] = useState(true);
  const [invalid, setInvalid] = useState<string | null>(null);
  const [progress, setProgress] = useState<{ phase: Phase; sent: number; total: number } | null>(null);
  const [done, setDone] = useState<Deployment | null>(null);
  const [pickerKey, setPickerKey] = useState(0);
  const action = useAction(async () => {
    if (!source) return;
    try {
      const created = await unwrap(api.POST("/v1/static/{slug}/deployments", site(slug)));
      let body: Blob = source.kind === "file" ? source.file : new Blob();
      let type = source.kind === "file" ? archiveType(source.file.name) : "application/gzip";
      if (source.kind === "folder") {
        setProgress({ phase: "packing", sent: 0, total: 0 });
        body = await packFolder(source.folder, true);
        type = "application/gzip";
      }
      setProgress({ phase: "uploading", sent: 0, total: body.size });
      let uploaded = (await putArchive(created.upload_url!, body, type, (sent, total) =>
        setProgress({ phase: "uploading", sent, total }),
      )) as Deployment;
      if (goLive) {
        setProgress({ phase: "finalizing", sent: body.size, total: body.size });
        uploaded = await unwrap(api.POST("/v1/static/{slug}/deployments/{id}/finalize", dep(slug, created.id)));
      }
      setDone(uploaded);
      setSource(null);
      setPickerKey((k) => k + 1);
    } finally {
      setProgress(null);
      onDeployed();
    }
  });
  return (
    <Card title={t("sites.deploy")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setDone(null);
          const bad = !source
            ? t("up.required")
            : source.kind === "folder" && source.folder.files.length === 0
              ? t("up.emptyFolder")
              : null;
          setInvalid(bad);
          if (!bad) void action.run();
        }}
      >
        <ArchivePicker
          key={pickerKey}
          accept=".zip,.tar,.tar.gz,.tgz,application/zip,application/x-tar,application/gzip"
          folderHint={t("sites.folderHint")}
          fileHint={t("sites.fileHint")}
          source={source}
          onChange={(s) => {
            setSource(s);
            setInvalid(null);
          }}
          error={invalid}
        />
        <label className="check">
          <input type="checkbox" checked={goLive} onChange={(e) => setGoLive(e.target.checked)} />
          {t("sites.goLive")}
        </label>
        {progress && <UploadProgress {...progress} />}
        <ErrorNote error={action.error} />
        {done && (
          <Notice>
            {done.status === "live"
              ? t("sites.deployedLive", { n: done.file_count, size: bytes(done.bytes, locale) })
              : t("sites.deployedUploaded", { n: done.file_count, size: bytes(done.bytes, locale) })}
          </Notice>
        )}
        <Submit busy={action.busy}>{t("sites.upload")}</Submit>
      </form>
    </Card>
  );
}

/** The site's deployments, newest first: finalize one uploaded, roll back to an earlier one. */
export function DeploymentsCard({
  slug,
  version,
  onChanged,
}: {
  slug: string;
  version: number;
  onChanged: () => void;
}) {
  const { t, locale } = useI18n();
  const list = useLoad(
    // a deployment whose upload never came is swept by the platform; there is nothing to do with it here
    async () =>
      ((await unwrap(api.GET("/v1/static/{slug}/deployments", site(slug)))) as Deployment[]).filter(
        (d) => d.status !== "awaiting_upload",
      ),
    [slug, version],
  );
  const act = useAction(async (what: "finalize" | "rollback", d: Deployment) => {
    if (what === "finalize") await unwrap(api.POST("/v1/static/{slug}/deployments/{id}/finalize", dep(slug, d.id)));
    else await unwrap(api.POST("/v1/static/{slug}/rollback", { ...site(slug), body: { deployment_id: d.id } }));
    list.reload();
    onChanged();
  });
  return (
    <Card title={t("sites.deployments")}>
      <Loaded list={list} error={list.error || act.error} empty={t("sites.noDeployments")}>
        {(rows) => (
          <ResourceTable
            rows={rows}
            testId="deployments"
            rowData={(d) => ({ "data-deployment": d.id })}
            columns={[
              {
                head: t("sites.deployment"),
                cell: (d) => (
                  <>
                    <code title={d.id}>{d.id.slice(0, 8)}</code>
                    <div className="muted small">{when(locale, d.created_at)}</div>
                  </>
                ),
              },
              {
                head: t("sites.status"),
                cell: (d) => (
                  <span className={`badge dep-${d.status}`} data-state={d.status}>
                    {t(`dep.${d.status}` as MessageKey)}
                  </span>
                ),
              },
              {
                head: t("sites.files"),
                cellClass: "num",
                cell: (d) => `${d.file_count} · ${bytes(d.bytes, locale)}`,
              },
              {
                head: t("sites.uploaded"),
                className: "hide-sm",
                cell: (d) => when(locale, d.finalized_at ?? d.uploaded_at),
              },
              {
                head: srOnly(t("db.actions")),
                cellClass: "right",
                cell: (d) => (
                  <>
                    {d.status === "uploaded" && (
                      <RowButton
                        label={t("sites.finalize")}
                        target={d.id.slice(0, 8)}
                        kind="primary"
                        busy={act.busy}
                        onClick={() => void act.run("finalize", d)}
                      />
                    )}
                    {d.status === "superseded" && (
                      <RowButton
                        label={t("sites.rollback")}
                        target={d.id.slice(0, 8)}
                        busy={act.busy}
                        onClick={() => void act.run("rollback", d)}
                      />
                    )}
                  </>
                ),
              },
            ]}
          />
        )}
      </Loaded>
    </Card>
  );
}
