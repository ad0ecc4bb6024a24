import { useState } from "react";
import { api, unwrap, type Pod, type Template } from "../api";
import { useI18n, when } from "../i18n";
import { Link, useRouter } from "../router";
import { NameAndSlug } from "../fields";
import { ListPage, PageHead } from "../lists";
import { Card, ErrorNote, Field, StateBadge, Submit, useAction, useEventStream, useLoad } from "../ui";
import { shownState } from "./idle";
import { AppsTabs, podBusy, POD_EVENTS, SLUG } from "./apps-common";
import { checkSpec, emptySpec, specBody, SpecFields, useSpec, type SpecErrors } from "./spec-fields";

export function PodsPage() {
  const { t, locale } = useI18n();
  // follows the live event stream (rollouts, crash loops); polled as a fallback: fast while a pod is changing
  // state and the stream is down, slowly beside it (not every change is an event)
  let live = false;
  const list = useLoad(
    async () => (await unwrap(api.GET("/v1/pods"))) as Pod[],
    [],
    (pods) => (live ? (pods.some(podBusy) ? 10_000 : 30_000) : pods.some(podBusy) ? 1500 : 5000),
  );
  live = useEventStream(POD_EVENTS, list.reload);
  return (
    <>
      <AppsTabs />
      <ListPage
        title={t("pods.title")}
        intro={t("pods.intro")}
        create={{ to: "/pods/new", label: t("pods.create") }}
        list={list}
        empty={t("pods.empty")}
        columns={[
          {
            head: t("pods.name"),
            cell: (p) => (
              <>
                <Link to={`/pods/${p.id}`}>{p.name}</Link>
                {p.group_id && <span className="chip">{t("pods.group")}</span>}
              </>
            ),
          },
          { head: t("pods.state"), cell: (p) => <StateBadge state={shownState(p)} busy={podBusy(p)} /> },
          {
            head: t("pods.image"),
            cell: (p) => (
              <code className="clip" title={p.image}>
                {p.image}
              </code>
            ),
          },
          { head: t("pods.size"), className: "hide-sm", cell: (p) => p.size },
          { head: t("pods.created"), className: "hide-sm", cell: (p) => when(locale, p.created_at) },
        ]}
      />
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
      <PageHead title={t("pods.create")} back="/pods" />
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
          <NameAndSlug
            label={t("pods.name")}
            inputName="pod-name"
            name={name}
            setName={setName}
            slug={slug}
            setSlug={setSlug}
            slugHint={t("pods.slugHint")}
            errors={errors}
          />
          <SpecFields spec={spec} set={set} errors={errors} optionalImage={!!template} />
          <ErrorNote error={action.error} />
          <Submit busy={action.busy}>{t("pods.create")}</Submit>
        </form>
      </Card>
    </>
  );
}
