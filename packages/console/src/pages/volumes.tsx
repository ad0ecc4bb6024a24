import { useState } from "react";
import { api, unwrap, type Volume } from "../api";
import { useI18n, when } from "../i18n";
import { Link } from "../router";
import { Card, ErrorNote, Field, Spinner, StateBadge, Submit, useAction, useLoad } from "../ui";
import { AppsTabs, SLUG } from "./apps-common";

const bytes = (n: number | null) => {
  if (n == null) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(u ? 1 : 0)} ${units[u]}`;
};

export function VolumesPage() {
  const { t, locale } = useI18n();
  const list = useLoad(
    async () => (await unwrap(api.GET("/v1/volumes"))) as Volume[],
    [],
    (vs) => (vs.some((v) => v.state === "creating") ? 1500 : null),
  );
  const remove = useAction(async (v: Volume) => {
    if (!window.confirm(t("vol.deleteConfirm", { name: v.name }))) return;
    await unwrap(api.DELETE("/v1/volumes/{id}", { params: { path: { id: v.id } } }));
    list.reload();
  });
  return (
    <>
      <AppsTabs />
      <div className="page-head">
        <div>
          <h1>{t("vol.title")}</h1>
          <p className="muted">{t("vol.intro")}</p>
        </div>
      </div>
      <div className="grid side">
        <Card title={t("vol.title")}>
          <ErrorNote error={list.error || remove.error} />
          {!list.data && !list.error && <Spinner label={t("common.loading")} />}
          {list.data && list.data.length === 0 && <p className="empty">{t("vol.empty")}</p>}
          {list.data && list.data.length > 0 && (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>{t("vol.name")}</th>
                    <th>{t("vol.state")}</th>
                    <th className="right">{t("vol.size")}</th>
                    <th className="right">{t("vol.used")}</th>
                    <th>{t("vol.attached")}</th>
                    <th>{t("pods.created")}</th>
                    <th>
                      <span className="sr-only">{t("common.delete")}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.map((v) => (
                    <tr key={v.id}>
                      <td>{v.name}</td>
                      <td>
                        <StateBadge state={v.state} />
                        {v.state_reason && <span className="muted"> {v.state_reason}</span>}
                      </td>
                      <td className="right num">{v.size_gb} GB</td>
                      <td className="right num">{bytes(v.used_bytes)}</td>
                      <td>
                        {v.attached_to ? <Link to={`/pods/${v.attached_to}`}>{v.attached_to.slice(0, 8)}</Link> : "—"}
                      </td>
                      <td>{when(locale, v.created_at)}</td>
                      <td className="right">
                        <button
                          type="button"
                          className="btn small danger"
                          disabled={remove.busy}
                          aria-label={`${t("common.delete")} ${v.name}`}
                          onClick={() => void remove.run(v)}
                        >
                          {t("common.delete")}
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Card>
        <NewVolume onCreated={list.reload} />
      </div>
    </>
  );
}

function NewVolume({ onCreated }: { onCreated: () => void }) {
  const { t } = useI18n();
  const [name, setName] = useState("");
  const [size, setSize] = useState("1");
  const [errors, setErrors] = useState<{ name?: string; size?: string }>({});
  const action = useAction(async () => {
    await unwrap(api.POST("/v1/volumes", { body: { name, size_gb: Number(size) } }));
    setName("");
    onCreated();
  });
  return (
    <Card title={t("vol.create")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const n = Number(size);
          const errs = {
            name: !name ? t("v.required") : SLUG.test(name) ? undefined : t("v.slug"),
            size: /^\d+$/.test(size) && n >= 1 && n <= 1024 ? undefined : t("v.range", { min: 1, max: 1024 }),
          };
          setErrors(errs);
          if (!errs.name && !errs.size) void action.run();
        }}
      >
        <Field label={t("vol.name")} error={errors.name} hint={t("pods.nameHint")}>
          {({ id, describedBy, invalid }) => (
            <input
              id={id}
              name="volume-name"
              autoComplete="off"
              aria-describedby={describedBy}
              aria-invalid={invalid}
              value={name}
              onChange={(e) => setName(e.target.value.toLowerCase())}
            />
          )}
        </Field>
        <Field label={t("vol.size")} error={errors.size}>
          {({ id, describedBy, invalid }) => (
            <input
              id={id}
              name="volume-size"
              inputMode="numeric"
              aria-describedby={describedBy}
              aria-invalid={invalid}
              value={size}
              onChange={(e) => setSize(e.target.value)}
            />
          )}
        </Field>
        <ErrorNote error={action.error} />
        <Submit busy={action.busy}>{t("vol.create")}</Submit>
      </form>
    </Card>
  );
}
