import { useState } from "react";
import { api, unwrap, type AppStats, type Site } from "../api";
import { useI18n, when } from "../i18n";
import { Link, useRouter } from "../router";
import { CopyField, DeleteByName, NameField } from "../fields";
import { Card, ErrorNote, Notice, Spinner, Submit, useAction, useEventStream, useLoad } from "../ui";
import { SLUG } from "./apps-common";
import { DomainsCard } from "./domains";
import { DeployCard, DeploymentsCard } from "./site-deploy";
import { checkNotFoundPage, LiveBadge, SiteOptions, SITE_EVENTS } from "./sites";
import { StatsCard } from "./stats-chart";
import { MetricsCard, SITE_CHARTS } from "./metrics-chart";

const path = (slug: string) => ({ params: { path: { slug } } });

/** One static site: its address, a new deployment from a folder, deployments, statistics, domains, deletion. */
export function SitePage({ slug }: { slug: string }) {
  const { t, locale } = useI18n();
  const { navigate } = useRouter();
  // a deploy from elsewhere (the CLI, CI) comes on the live event stream; polled slowly beside it, and every 15 s
  // while it is down
  let live = false;
  const site = useLoad(
    async () => (await unwrap(api.GET("/v1/static/{slug}", path(slug)))) as Site,
    [slug],
    () => (live ? 60_000 : 15_000),
  );
  // bumped after each deploy, finalize or rollback: the deployments list and the site read again
  const [version, setVersion] = useState(0);
  const changed = () => {
    setVersion((v) => v + 1);
    site.reload();
  };
  live = useEventStream(SITE_EVENTS, changed);
  if (!site.data) return site.error ? <ErrorNote error={site.error} /> : <Spinner label={t("common.loading")} />;
  const s = site.data;
  return (
    <>
      <div className="page-head">
        <div>
          <Link to="/sites" className="crumb">
            ← {t("sites.title")}
          </Link>
          <h1>
            {s.name} <LiveBadge site={s} />
          </h1>
          <p className="muted">
            <a href={s.url} target="_blank" rel="noreferrer noopener" data-testid="site-url">
              {s.url}
            </a>
          </p>
        </div>
      </div>
      {!s.live_deployment_id && <p className="note warn">{t("sites.notLiveHint")}</p>}
      <div className="grid halves">
        <Card title={t("pods.details")}>
          <dl className="props">
            <CopyField term={t("pods.url")} value={s.url} />
            <dt>SPA</dt>
            <dd>{s.spa ? t("common.on") : t("common.off")}</dd>
            <dt>{t("sites.notFoundShort")}</dt>
            <dd>{s.not_found_page ? <code>{s.not_found_page}</code> : t("sites.edgePage")}</dd>
            <dt>{t("sites.liveDeployment")}</dt>
            <dd>{s.live_deployment_id ? <code>{s.live_deployment_id.slice(0, 8)}</code> : "—"}</dd>
            <dt>{t("sites.created")}</dt>
            <dd>{when(locale, s.created_at)}</dd>
          </dl>
        </Card>
        <Settings site={s} onSaved={(next) => site.setData(next)} />
      </div>
      <DeployCard slug={s.slug} onDeployed={changed} />
      <DeploymentsCard slug={s.slug} version={version} onChanged={changed} />
      <StatsCard
        name={s.slug}
        load={async (days) =>
          (await unwrap(
            api.GET("/v1/static/{slug}/stats", { params: { path: { slug: s.slug }, query: { days } } }),
          )) as AppStats
        }
      />
      <MetricsCard path={`/v1/static/${s.slug}/metrics`} charts={SITE_CHARTS} />
      <DomainsCard slug={s.slug} />
      <DeleteByName
        title={t("sites.delete")}
        name={s.name}
        hint={t("sites.deleteHint", { name: s.name })}
        onConfirm={async () => {
          await unwrap(api.DELETE("/v1/static/{slug}", path(s.slug)));
          navigate("/sites");
        }}
      />
    </>
  );
}

/** The name, the SPA fallback and the 404 page (PATCH); the slug stays, since keys and domains name it. */
function Settings({ site, onSaved }: { site: Site; onSaved: (s: Site) => void }) {
  const { t } = useI18n();
  const [name, setName] = useState(site.name);
  const [spa, setSpa] = useState(site.spa);
  const [notFound, setNotFound] = useState(site.not_found_page ?? "");
  const [errors, setErrors] = useState<{ name?: string; notFound?: string }>({});
  const [done, setDone] = useState(false);
  const action = useAction(async () => {
    const body = { name, spa, not_found_page: notFound.trim() || null };
    onSaved((await unwrap(api.PATCH("/v1/static/{slug}", { ...path(site.slug), body }))) as Site);
    setDone(true);
  });
  return (
    <Card title={t("sites.settings")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setDone(false);
          const errs = {
            name: !name ? t("v.required") : SLUG.test(name) ? undefined : t("v.slug"),
            notFound: checkNotFoundPage(notFound, t),
          };
          setErrors(errs);
          if (!Object.values(errs).some(Boolean)) void action.run();
        }}
      >
        <NameField label={t("sites.name")} name="site-name" value={name} onValue={setName} error={errors.name} />
        <SiteOptions spa={spa} setSpa={setSpa} notFound={notFound} setNotFound={setNotFound} error={errors.notFound} />
        <ErrorNote error={action.error} />
        {done && <Notice>{t("common.saved")}</Notice>}
        <Submit busy={action.busy}>{t("common.save")}</Submit>
      </form>
    </Card>
  );
}
