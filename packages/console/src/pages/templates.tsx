import { useState } from "react";
import { api, unwrap, type Template } from "../api";
import { useI18n, when } from "../i18n";
import { Link } from "../router";
import { NameField } from "../fields";
import { DeleteButton, Loaded, PageHead } from "../lists";
import { Card, ErrorNote, Submit, useAction, useLoad } from "../ui";
import { AppsTabs, SLUG } from "./apps-common";
import { checkSpec, specBody, SpecFields, useSpec, type SpecErrors } from "./spec-fields";

export function TemplatesPage() {
  const { t, locale } = useI18n();
  const list = useLoad(async () => (await unwrap(api.GET("/v1/pod-templates"))) as Template[], []);
  const remove = useAction(async (x: Template) => {
    if (!window.confirm(t("tpl.deleteConfirm", { name: x.name }))) return;
    await unwrap(api.DELETE("/v1/pod-templates/{id}", { params: { path: { id: x.id } } }));
    list.reload();
  });
  return (
    <>
      <AppsTabs />
      <PageHead title={t("tpl.title")} intro={t("tpl.intro")} />
      <div className="grid side">
        <Card title={t("tpl.title")}>
          <Loaded list={list} error={list.error || remove.error} empty={t("tpl.empty")}>
            {(rows) => (
              <ul className="rows">
                {rows.map((x) => (
                  <li key={x.id}>
                    <div className="row-main">
                      <strong>{x.name}</strong>
                      <span className="muted">
                        {[x.image, x.size, x.port && `:${x.port}`].filter(Boolean).join(" · ") || "—"}
                      </span>
                      <span className="muted small">{when(locale, x.updated_at)}</span>
                    </div>
                    <div className="actions">
                      <Link to={`/pods/new?template=${encodeURIComponent(x.id)}`} className="btn small">
                        {t("tpl.deploy")}
                      </Link>
                      <DeleteButton target={x.name} busy={remove.busy} onClick={() => void remove.run(x)} />
                    </div>
                  </li>
                ))}
              </ul>
            )}
          </Loaded>
        </Card>
        <NewTemplate onCreated={list.reload} />
      </div>
    </>
  );
}

function NewTemplate({ onCreated }: { onCreated: () => void }) {
  const { t } = useI18n();
  const { spec, set, setSpec } = useSpec();
  const [name, setName] = useState("");
  const [errors, setErrors] = useState<SpecErrors & { name?: string }>({});
  const action = useAction(async () => {
    await unwrap(api.POST("/v1/pod-templates", { body: { name, ...specBody(spec) } }));
    setName("");
    setSpec({ ...spec, image: "", command: "", env: [] });
    onCreated();
  });
  return (
    <Card title={t("tpl.create")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const errs = {
            ...checkSpec(spec, t, false),
            name: !name ? t("v.required") : SLUG.test(name) ? undefined : t("v.slug"),
          };
          setErrors(errs);
          if (!Object.values(errs).some(Boolean)) void action.run();
        }}
      >
        <NameField
          label={t("tpl.name")}
          name="template-name"
          value={name}
          onValue={setName}
          error={errors.name}
          hint={t("pods.nameHint")}
        />
        <SpecFields spec={spec} set={set} errors={errors} />
        <ErrorNote error={action.error} />
        <Submit busy={action.busy}>{t("tpl.create")}</Submit>
      </form>
    </Card>
  );
}
