import { useState } from "react";
import { api, unwrap, type Site } from "../api";
import { useI18n, when, type Translate } from "../i18n";
import { Link, useRouter } from "../router";
import { NameAndSlug, TextField } from "../fields";
import { ListPage, PageHead } from "../lists";
import { Card, ErrorNote, Submit, useAction, useEventStream, useLoad } from "../ui";
import { SLUG } from "./apps-common";

/** A 404 page is a file path inside the site: no leading "/", no "..", no backslashes. */
export function checkNotFoundPage(page: string, t: Translate): string | undefined {
  const p = page.trim();
  if (!p) return undefined;
  if (p.startsWith("/") || p.includes("\\") || p.split("/").includes("..") || p.length > 1024) return t("v.sitePath");
  return undefined;
}

/** Whether a site serves anything yet, as a badge. */
export function LiveBadge({ site }: { site: Site }) {
  const { t } = useI18n();
  return site.live_deployment_id ? (
    <span className="badge state-running" data-state="live">
      {t("sites.live")}
    </span>
  ) : (
    <span className="badge" data-state="empty">
      {t("sites.notLive")}
    </span>
  );
}

/** the events that change what the site pages show (their live event stream, ui.tsx useEventStream) */
export const SITE_EVENTS = ["deploy.succeeded"];

export function SitesPage() {
  const { t, locale } = useI18n();
  // a deploy from elsewhere (the CLI, CI) comes on the live event stream; polled slowly beside it, and every 15 s
  // while it is down
  let live = false;
  const list = useLoad(
    async () => (await unwrap(api.GET("/v1/static"))) as Site[],
    [],
    () => (live ? 60_000 : 15_000),
  );
  live = useEventStream(SITE_EVENTS, list.reload);
  return (
    <ListPage
      title={t("sites.title")}
      intro={t("sites.intro")}
      create={{ to: "/sites/new", label: t("sites.create") }}
      list={list}
      empty={t("sites.empty")}
      columns={[
        {
          head: t("sites.name"),
          cell: (s) => (
            <>
              <Link to={`/sites/${s.slug === "new" ? s.id : s.slug}`}>{s.name}</Link>
              {s.spa && <span className="chip">SPA</span>}
            </>
          ),
        },
        { head: t("sites.status"), cell: (s) => <LiveBadge site={s} /> },
        {
          head: t("sites.url"),
          cell: (s) => (
            <a className="clip" href={s.url} target="_blank" rel="noreferrer noopener">
              {s.url.replace(/^https?:\/\//, "")}
            </a>
          ),
        },
        { head: t("sites.created"), className: "hide-sm", cell: (s) => when(locale, s.created_at) },
      ]}
    />
  );
}

export function NewSitePage() {
  const { t } = useI18n();
  const { navigate } = useRouter();
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [spa, setSpa] = useState(false);
  const [notFound, setNotFound] = useState("");
  const [errors, setErrors] = useState<{ name?: string; slug?: string; notFound?: string }>({});
  const action = useAction(async () => {
    const body = {
      name,
      ...(slug ? { slug } : {}),
      spa,
      ...(notFound.trim() ? { not_found_page: notFound.trim() } : {}),
    };
    const created = await unwrap(api.POST("/v1/static", { body }));
    navigate(`/sites/${created.slug}`);
  });
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const errs = {
      name: !name ? t("v.required") : SLUG.test(name) ? undefined : t("v.slug"),
      slug: !slug || SLUG.test(slug) ? undefined : t("v.slug"),
      notFound: checkNotFoundPage(notFound, t),
    };
    setErrors(errs);
    if (!Object.values(errs).some(Boolean)) void action.run();
  };
  return (
    <>
      <PageHead title={t("sites.create")} back="/sites" />
      <Card>
        <form className="narrow wide" noValidate onSubmit={submit}>
          <NameAndSlug
            label={t("sites.name")}
            inputName="site-name"
            name={name}
            setName={setName}
            slug={slug}
            setSlug={setSlug}
            slugHint={t("sites.slugHint")}
            errors={errors}
          />
          <SiteOptions
            spa={spa}
            setSpa={setSpa}
            notFound={notFound}
            setNotFound={setNotFound}
            error={errors.notFound}
          />
          <ErrorNote error={action.error} />
          <Submit busy={action.busy}>{t("sites.create")}</Submit>
        </form>
      </Card>
    </>
  );
}

/** The SPA fallback and the custom 404 page, shared by the create form and the site's settings. */
export function SiteOptions(props: {
  spa: boolean;
  setSpa: (v: boolean) => void;
  notFound: string;
  setNotFound: (v: string) => void;
  error?: string;
}) {
  const { t } = useI18n();
  return (
    <>
      <div className="field">
        <label className="check">
          <input type="checkbox" checked={props.spa} onChange={(e) => props.setSpa(e.target.checked)} />
          {t("sites.spa")}
        </label>
        <p className="hint">{t("sites.spaHint")}</p>
      </div>
      <TextField
        label={t("sites.notFound")}
        error={props.error}
        hint={t("sites.notFoundHint")}
        name="not-found-page"
        className="mono"
        placeholder="404.html"
        spellCheck={false}
        autoComplete="off"
        value={props.notFound}
        onValue={props.setNotFound}
      />
    </>
  );
}
