import { useState } from "react";
import { api, unwrap, type Db } from "../api";
import { useI18n, type MessageKey } from "../i18n";
import { TextField } from "../fields";
import { Field, useLoad } from "../ui";
import {
  EnvEditor,
  envObject,
  envProblem,
  IMAGE,
  splitArgs,
  useRegistryImages,
  useSizes,
  type EnvRow,
} from "./apps-common";

/** What a pod, a group and a template share: image, port, size, command, env and attached databases. */
export interface Spec {
  image: string;
  port: string;
  size: string;
  command: string;
  env: EnvRow[];
  databases: string[];
}

export type SpecErrors = Partial<Record<"image" | "port" | "command" | "env", string>>;

export const emptySpec = (): Spec => ({ image: "", port: "8080", size: "nano", command: "", env: [], databases: [] });

/** Checks a spec before sending; `imageRequired` is false when a template may supply the image. */
export function checkSpec(spec: Spec, t: (k: MessageKey) => string, imageRequired: boolean): SpecErrors {
  const errs: SpecErrors = {};
  if (!spec.image.trim()) {
    if (imageRequired) errs.image = t("v.required");
  } else if (!IMAGE.test(spec.image.trim())) errs.image = t("v.image");
  const port = spec.port.trim();
  if (port && !(/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535)) errs.port = t("v.port");
  if (splitArgs(spec.command) === null) errs.command = t("v.command");
  const env = envProblem(spec.env);
  if (env) errs.env = t(env);
  return errs;
}

/** The request fields of a spec; empty fields are left out so the server's (or the template's) defaults apply. */
export function specBody(spec: Spec) {
  const command = splitArgs(spec.command) ?? [];
  const env = envObject(spec.env);
  return {
    ...(spec.image.trim() ? { image: spec.image.trim() } : {}),
    ...(spec.port.trim() ? { port: Number(spec.port) } : {}),
    ...(spec.size ? { size: spec.size } : {}),
    ...(command.length ? { command } : {}),
    ...(Object.keys(env).length ? { env } : {}),
    ...(spec.databases.length ? { databases: spec.databases } : {}),
  };
}

export function useSpec(initial: Spec = emptySpec()) {
  const [spec, setSpec] = useState<Spec>(initial);
  const set = (patch: Partial<Spec>) => setSpec((s) => ({ ...s, ...patch }));
  return { spec, set, setSpec };
}

/** The shared form fields of a spec, each labelled, with its validation message. */
export function SpecFields({
  spec,
  set,
  errors,
  databases = true,
  optionalImage = false,
}: {
  spec: Spec;
  set: (patch: Partial<Spec>) => void;
  errors: SpecErrors;
  databases?: boolean;
  optionalImage?: boolean;
}) {
  const { t } = useI18n();
  const sizes = useSizes();
  const registry = useRegistryImages();
  return (
    <>
      <TextField
        label={t("pods.image")}
        error={errors.image}
        hint={optionalImage ? t("pods.templateHint") : t("pods.imageHint")}
        name="image"
        spellCheck={false}
        autoComplete="off"
        placeholder="nginx:1.27"
        value={spec.image}
        onValue={(v) => set({ image: v })}
      />
      {registry.loaded && (
        <Field label={t("pods.fromRegistry")} hint={registry.images.length ? undefined : t("pods.registryNone")}>
          {({ id, describedBy }) => (
            <select
              id={id}
              aria-describedby={describedBy}
              disabled={!registry.images.length}
              value={registry.images.includes(spec.image) ? spec.image : ""}
              onChange={(e) => e.target.value && set({ image: e.target.value })}
            >
              <option value="">{t("pods.registryPick")}</option>
              {registry.images.map((img) => (
                <option key={img} value={img}>
                  {img}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      <div className="field-pair">
        <TextField
          label={t("pods.port")}
          error={errors.port}
          hint={t("pods.portHint")}
          name="port"
          inputMode="numeric"
          value={spec.port}
          onValue={(v) => set({ port: v })}
        />
        <Field label={t("pods.size")}>
          {({ id }) => (
            <select id={id} name="size" value={spec.size} onChange={(e) => set({ size: e.target.value })}>
              {optionalImage && <option value="">{t("pods.fromTemplate")}</option>}
              {sizes.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <TextField
        label={t("pods.command")}
        error={errors.command}
        hint={t("pods.commandHint")}
        name="command"
        spellCheck={false}
        autoComplete="off"
        className="mono"
        placeholder="/bin/server --port 8080"
        value={spec.command}
        onValue={(v) => set({ command: v })}
      />
      <EnvEditor rows={spec.env} onChange={(env) => set({ env })} error={errors.env} />
      {databases && <DatabasePicker chosen={spec.databases} onChange={(d) => set({ databases: d })} />}
    </>
  );
}

/** The caller's databases as checkboxes; the first chosen becomes DATABASE_URL. */
function DatabasePicker({ chosen, onChange }: { chosen: string[]; onChange: (ids: string[]) => void }) {
  const { t } = useI18n();
  const dbs = useLoad(async () => (await unwrap(api.GET("/v1/databases"))) as Db[], []);
  const live = (dbs.data ?? []).filter((d) => d.state !== "removed");
  return (
    <fieldset>
      <legend>{t("pods.databases")}</legend>
      {live.length === 0 ? (
        <p className="hint">{t("pods.noDatabases")}</p>
      ) : (
        <>
          <div className="check-list">
            {live.map((d) => (
              <label key={d.id} className="check">
                <input
                  type="checkbox"
                  checked={chosen.includes(d.id)}
                  onChange={(e) => onChange(e.target.checked ? [...chosen, d.id] : chosen.filter((x) => x !== d.id))}
                />
                {d.name}
              </label>
            ))}
          </div>
          <p className="hint">{t("pods.databasesHint")}</p>
        </>
      )}
    </fieldset>
  );
}
