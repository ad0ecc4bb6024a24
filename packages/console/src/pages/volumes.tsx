import { useState } from "react";
import { api, unwrap, type Volume } from "../api";
import { useI18n, when } from "../i18n";
import { Link } from "../router";
import { NameField, TextField } from "../fields";
import { DeleteButton, Loaded, PageHead, ResourceTable, srOnly } from "../lists";
import { Card, ErrorNote, StateBadge, Submit, useAction, useLoad } from "../ui";
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
      <PageHead title={t("vol.title")} intro={t("vol.intro")} />
      <div className="grid side">
        <Card title={t("vol.title")}>
          <Loaded list={list} error={list.error || remove.error} empty={t("vol.empty")}>
            {(rows) => (
              <ResourceTable
                rows={rows}
                columns={[
                  { head: t("vol.name"), cell: (v) => v.name },
                  {
                    head: t("vol.state"),
                    cell: (v) => (
                      <>
                        <StateBadge state={v.state} />
                        {v.state_reason && <span className="muted"> {v.state_reason}</span>}
                      </>
                    ),
                  },
                  { head: t("vol.size"), className: "right", cellClass: "right num", cell: (v) => `${v.size_gb} GB` },
                  { head: t("vol.used"), className: "right", cellClass: "right num", cell: (v) => bytes(v.used_bytes) },
                  {
                    head: t("vol.attached"),
                    cell: (v) =>
                      v.attached_to ? <Link to={`/pods/${v.attached_to}`}>{v.attached_to.slice(0, 8)}</Link> : "—",
                  },
                  { head: t("pods.created"), cell: (v) => when(locale, v.created_at) },
                  {
                    head: srOnly(t("common.delete")),
                    cellClass: "right",
                    cell: (v) => <DeleteButton target={v.name} busy={remove.busy} onClick={() => void remove.run(v)} />,
                  },
                ]}
              />
            )}
          </Loaded>
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
        <NameField
          label={t("vol.name")}
          name="volume-name"
          value={name}
          onValue={setName}
          error={errors.name}
          hint={t("pods.nameHint")}
        />
        <TextField
          label={t("vol.size")}
          error={errors.size}
          name="volume-size"
          inputMode="numeric"
          value={size}
          onValue={setSize}
        />
        <ErrorNote error={action.error} />
        <Submit busy={action.busy}>{t("vol.create")}</Submit>
      </form>
    </Card>
  );
}
