import { useState } from "react";
import { api, unwrap, type Pod, type Template } from "../api";
import { useI18n, when } from "../i18n";
import { Link, useRouter } from "../router";
import { Card, ErrorNote, Field, Spinner, StateBadge, Submit, useAction, useLoad } from "../ui";
import { AppsTabs, podBusy, SLUG } from "./apps-common";
import { checkSpec, emptySpec, specBody, SpecFields, useSpec, type SpecErrors } from "./spec-fields";

export function PodsPage() {
  const { t, locale } = useI18n();
  // polled: fast while a pod is changing state, slower otherwise (a pod may crash or be changed elsewhere)
  const list = useLoad(
    async () => (await unwrap(api.GET("/v1/pods"))) as Pod[],
    [],
    (pods) => (pods.some(podBusy) ? 1500 : 5000),
  );
  return (
    <>
      <AppsTabs />
      <div className="page-head">
        <div>
          <h1>{t("pods.title")}</h1>
          <p className="muted">{t("pods.intro")}</p>
        </div>
        <Link to="/pods/new" className="btn primary">
          {t("pods.create")}
        </Link>
      </div>
      <ErrorNote error={list.error} />
      {!list.data && !list.error && <Spinner label={t("common.loading")} />}
      {list.data && list.data.length === 0 && (
        <Card>
          <p className="empty">{t("pods.empty")}</p>
        </Card>
      )}
      {list.data && list.data.length > 0 && (
        <Card>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>{t("pods.name")}</th>
                  <th>{t("pods.state")}</th>
                  <th>{t("pods.image")}</th>
                  <th className="hide-sm">{t("pods.size")}</th>
                  <th className="hide-sm">{t("pods.created")}</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((p) => (
                  <tr key={p.id}>
                    <td>
                      <Link to={`/pods/${p.id}`}>{p.name}</Link>
                      {p.group_id && <span className="chip">{t("pods.group")}</span>}
                    </td>
                    <td>
                      <StateBadge state={p.state} busy={podBusy(p)} />
                    </td>
                    <td>
                      <code className="clip" title={p.image}>
                        {p.image}
                      </code>
                    </td>
                    <td className="hide-sm">{p.size}</td>
                    <td className="hide-sm">{when(locale, p.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      )}
    </>
  );
}

export function NewPodPage() {
  const { t } = useI18n();
  const { navigate } = useRouter();
  // the templates page links here with ?template=<id>
  const [template, setTemplate] = useState(() => new URLSearchParams(window.location.search).get("template") ?? "");
  const { spec, set } = useSpec(template ? { ...emptySpec(), port: "", size: "" } : emptySpec());
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [errors, setErrors] = useState<SpecErrors & { name?: string; slug?: string }>({});
  const templates = useLoad(async () => (await unwrap(api.GET("/v1/pod-templates"))) as Template[], []);
  const action = useAction(async () => {
    const body = { name, ...(slug ? { slug } : {}), ...(template ? { template } : {}), ...specBody(spec) };
    const created = await unwrap(api.POST("/v1/pods", { body }));
    navigate(`/pods/${created.id}`);
  });
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const errs = {
      ...checkSpec(spec, t, !template),
      name: !name ? t("v.required") : SLUG.test(name) ? undefined : t("v.slug"),
      slug: !slug || SLUG.test(slug) ? undefined : t("v.slug"),
    };
    setErrors(errs);
    if (!Object.values(errs).some(Boolean)) void action.run();
  };
  return (
    <>
      <AppsTabs />
      <div className="page-head">
        <h1>{t("pods.create")}</h1>
        <Link to="/pods" className="btn ghost">
          {t("common.back")}
        </Link>
      </div>
      <Card>
        <form className="narrow wide" noValidate onSubmit={submit}>
          {(templates.data ?? []).length > 0 && (
            <Field label={t("pods.template")}>
              {({ id }) => (
                <select
                  id={id}
                  value={template}
                  onChange={(e) => {
                    setTemplate(e.target.value);
                    // with a template, what is left empty comes from it; without, the usual defaults
                    set(e.target.value ? { port: "", size: "" } : { port: "8080", size: "nano" });
                  }}
                >
                  <option value="">{t("pods.noTemplate")}</option>
                  {templates.data!.map((x) => (
                    <option key={x.id} value={x.id}>
                      {x.name}
                      {x.image ? ` · ${x.image}` : ""}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          )}
          <div className="field-pair">
            <Field label={t("pods.name")} error={errors.name} hint={t("pods.nameHint")}>
              {({ id, describedBy, invalid }) => (
                <input
                  id={id}
                  name="pod-name"
                  autoComplete="off"
                  aria-describedby={describedBy}
                  aria-invalid={invalid}
                  value={name}
                  onChange={(e) => setName(e.target.value.toLowerCase())}
                />
              )}
            </Field>
            <Field label={t("pods.slug")} error={errors.slug} hint={t("pods.slugHint")}>
              {({ id, describedBy, invalid }) => (
                <input
                  id={id}
                  name="slug"
                  autoComplete="off"
                  aria-describedby={describedBy}
                  aria-invalid={invalid}
                  value={slug}
                  onChange={(e) => setSlug(e.target.value.toLowerCase())}
                />
              )}
            </Field>
          </div>
          <SpecFields spec={spec} set={set} errors={errors} optionalImage={!!template} />
          <ErrorNote error={action.error} />
          <Submit busy={action.busy}>{t("pods.create")}</Submit>
        </form>
      </Card>
    </>
  );
}
