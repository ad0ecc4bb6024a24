import { useId, useState } from "react";
import { useI18n } from "../i18n";
import { bytes, pickedFolder, type PickedFolder } from "../upload";

/** What the user chose to upload: a folder (packed in the page) or one archive file as it is. */
export type Source = { kind: "folder"; folder: PickedFolder } | { kind: "file"; file: File };

/** The folder input's non-standard attributes (every current browser knows them), which React passes through. */
const DIRECTORY = { webkitdirectory: "", directory: "" } as object;

/**
 * A folder picker (`webkitdirectory`) and, as the other choice, one archive file. `accept` lists the archive
 * types the API takes for this upload. The chosen files are summed up and a few of their paths listed.
 */
export function ArchivePicker({
  accept,
  fileHint,
  folderHint,
  source,
  onChange,
  error,
}: {
  accept: string;
  fileHint: string;
  folderHint: string;
  source: Source | null;
  onChange: (s: Source | null) => void;
  error?: string | null;
}) {
  const { t, locale } = useI18n();
  const id = useId();
  const [mode, setMode] = useState<"folder" | "file">("folder");
  const choose = (m: "folder" | "file") => {
    setMode(m);
    onChange(null);
  };
  return (
    <fieldset className={`picker${error ? " invalid" : ""}`}>
      <legend>{t("up.source")}</legend>
      <div className="segmented" role="radiogroup" aria-label={t("up.source")}>
        {(["folder", "file"] as const).map((m) => (
          <label key={m} className="check">
            <input type="radio" name={`${id}-mode`} checked={mode === m} onChange={() => choose(m)} />
            {m === "folder" ? t("up.folder") : t("up.file")}
          </label>
        ))}
      </div>
      {mode === "folder" ? (
        <div className="field">
          <label htmlFor={`${id}-folder`}>{t("up.chooseFolder")}</label>
          <input
            id={`${id}-folder`}
            type="file"
            data-testid="folder-input"
            multiple
            {...DIRECTORY}
            aria-describedby={`${id}-hint`}
            onChange={(e) => {
              const folder = pickedFolder(e.target.files);
              onChange(folder ? { kind: "folder", folder } : null);
            }}
          />
          <p className="hint" id={`${id}-hint`}>
            {folderHint}
          </p>
        </div>
      ) : (
        <div className="field">
          <label htmlFor={`${id}-file`}>{t("up.chooseFile")}</label>
          <input
            id={`${id}-file`}
            type="file"
            data-testid="archive-input"
            accept={accept}
            aria-describedby={`${id}-hint`}
            onChange={(e) => {
              const file = e.target.files?.[0];
              onChange(file ? { kind: "file", file } : null);
            }}
          />
          <p className="hint" id={`${id}-hint`}>
            {fileHint}
          </p>
        </div>
      )}
      {source?.kind === "folder" && (
        <div className="picked" data-testid="picked">
          <p>
            <strong>{source.folder.name || t("up.folder")}</strong>
            {" · "}
            {t("up.summary", { n: source.folder.files.length, size: bytes(source.folder.bytes, locale) })}
            {source.folder.skipped > 0 && (
              <span className="muted"> · {t("up.skipped", { n: source.folder.skipped })}</span>
            )}
          </p>
          <ul className="file-list">
            {source.folder.files.slice(0, 6).map((f) => (
              <li key={f.path}>
                <code>{f.path}</code>
                <span className="muted">{bytes(f.data.size, locale)}</span>
              </li>
            ))}
            {source.folder.files.length > 6 && (
              <li className="muted">{t("up.more", { n: source.folder.files.length - 6 })}</li>
            )}
          </ul>
        </div>
      )}
      {source?.kind === "file" && (
        <p className="picked" data-testid="picked">
          <strong>{source.file.name}</strong> · {bytes(source.file.size, locale)}
        </p>
      )}
      {error && <p className="field-error">{error}</p>}
    </fieldset>
  );
}

export type Phase = "packing" | "uploading" | "finalizing" | "starting";

/** An upload's progress: packing (unknown length), then bytes sent out of the archive's size. */
export function UploadProgress({ phase, sent, total }: { phase: Phase; sent: number; total: number }) {
  const { t, locale } = useI18n();
  const pct = total > 0 ? Math.min(100, Math.round((sent / total) * 100)) : 0;
  const label =
    phase === "uploading"
      ? t("up.uploading", { pct, sent: bytes(sent, locale), total: bytes(total, locale) })
      : t(`up.${phase}`);
  return (
    <div className="upload-progress" role="status" aria-live="polite" data-testid="upload-progress">
      <span>{label}</span>
      <progress
        max={100}
        value={phase === "uploading" ? pct : phase === "packing" ? undefined : 100}
        aria-label={label}
      />
    </div>
  );
}
