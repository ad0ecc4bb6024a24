import { useState } from "react";
import { api, unwrap, type Template } from "../api";
import { useI18n, when } from "../i18n";
import { Link } from "../router";
import { Card, ErrorNote, Field, Spinner, Submit, useAction, useLoad } from "../ui";
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
      <div className="page-head">
        <div>
          <h1>{t("tpl.title")}</h1>
          <p className="muted">{t("tpl.intro")}</p>
        </div>
      </div>
      <div className="grid side">
        <Card title={t("tpl.title")}>
          <ErrorNote error={list.error || remove.error} />
          {!list.data && !list.error && <Spinner label={t("common.loading")} />}
          {list.data && list.data.length === 0 && <p className="empty">{t("tpl.empty")}</p>}
          {list.data && list.data.length > 0 && (
            <ul className="rows">
              {list.data.map((x) => (
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
                    <button
                      type="button"
                      className="btn small danger"
                      disabled={remove.busy}
                      aria-label={`${t("common.delete")} ${x.name}`}
                      onClick={() => void remove.run(x)}
                    >
                      {t("common.delete")}
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          )}
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
        <Field label={t("tpl.name")} error={errors.name} hint={t("pods.nameHint")}>
          {({ id, describedBy, invalid }) => (
            <input
              id={id}
              name="template-name"
              autoComplete="off"
              aria-describedby={describedBy}
              aria-invalid={invalid}
              value={name}
              onChange={(e) => setName(e.target.value.toLowerCase())}
            />
          )}
        </Field>
        <SpecFields spec={spec} set={set} errors={errors} />
        <ErrorNote error={action.error} />
        <Submit busy={action.busy}>{t("tpl.create")}</Submit>
      </form>
    </Card>
  );
}
