import { useCallback, useEffect, useMemo, useState } from "react";
import { api, session, unwrap, PlatformApiError } from "./api";
import { I18n, translator, useI18n, type Locale } from "./i18n";
import { Link, RouterProvider, useRouter } from "./router";
import { Spinner } from "./ui";
import { AuthPage } from "./pages/auth";
import { AccountPage } from "./pages/account";
import { KeysPage } from "./pages/keys";
import { DatabasesPage, NewDatabasePage } from "./pages/databases";
import { DatabasePage } from "./pages/database";
import { BillingPage } from "./pages/billing";
import { NewPodPage, PodsPage } from "./pages/pods";
import { PodPage } from "./pages/pod";
import { GroupsPage, NewGroupPage } from "./pages/groups";
import { GroupPage } from "./pages/group";
import { VolumesPage } from "./pages/volumes";
import { TemplatesPage } from "./pages/templates";
import { NewSitePage, SitesPage } from "./pages/sites";
import { SitePage } from "./pages/site";
import { DomainsPage } from "./pages/all-domains";
import { BuildsPage, NewBuildPage } from "./pages/builds";
import { PreviewsPage } from "./pages/previews";
import { AlertsPage } from "./pages/alerts";
import { LogDrainsPage } from "./pages/log-drains";
import { CronJobPage, CronJobsPage } from "./pages/cron-jobs";
import { BuildPage } from "./pages/build";
import { BucketsPage } from "./pages/buckets";
import { BucketPage } from "./pages/bucket";
import { BucketKeysPage } from "./pages/bucket-keys";
import { InvitePage } from "./pages/invite";
import { OrgPage } from "./pages/org";
import { PartnerPage } from "./pages/partner";
import { SuiteLanding, SuiteWizardPage } from "./pages/suite";
import { ContextBanner, ContextSwitch, OrgProvider, useOrgState } from "./org-context";
import type { Me } from "./me";

const initialLocale = (): Locale => (navigator.language?.toLowerCase().startsWith("ko") ? "ko" : "en");

export function App() {
  const [locale, setLocale] = useState<Locale>(initialLocale);
  const i18n = useMemo(() => ({ locale, t: translator(locale), setLocale }), [locale]);
  useEffect(() => {
    document.documentElement.lang = locale;
  }, [locale]);
  return (
    <I18n.Provider value={i18n}>
      <RouterProvider>
        <Shell />
      </RouterProvider>
    </I18n.Provider>
  );
}

/** Who is signed in (GET /v1/me with the session cookie): null when nobody, undefined while asking. */
function useMe() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const refresh = useCallback(async () => {
    try {
      setMe((await unwrap(api.GET("/v1/me"))) as Me);
    } catch (err) {
      if (err instanceof PlatformApiError && err.status === 401) setMe(null);
      else throw err;
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  return { me, setMe, refresh };
}

/**
 * Whether the signed-in account is a partner: GET /v1/partner answers 200 (403 partner_required for everyone else).
 * Only then does the navigation show the partner page.
 */
function useIsPartner(me: Me | null | undefined) {
  const [partner, setPartner] = useState(false);
  useEffect(() => {
    let alive = true;
    setPartner(false);
    if (me)
      api
        .GET("/v1/partner")
        .then(() => alive && setPartner(true))
        .catch(() => {});
    return () => {
      alive = false;
    };
  }, [me?.id]);
  return partner;
}

/** Where to go after signing in: `next` when it is a path of this console (never another origin). */
function nextPath(): string | null {
  const next = new URLSearchParams(window.location.search).get("next");
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : null;
}

function Shell() {
  const { path, navigate } = useRouter();
  const { t, setLocale } = useI18n();
  const { me, setMe, refresh } = useMe();
  const orgState = useOrgState(!!me);
  const isPartner = useIsPartner(me);
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    if (me?.locale) setLocale(me.locale);
  }, [me?.locale, setLocale]);
  useEffect(() => setMenuOpen(false), [path]);

  const publicPage = path === "/signin" || path === "/signup";
  // an invitation link opens for anyone: its preview is public, accepting needs the invited account
  const invite = path === "/invite";
  // the suite sign-in's landing turns its one-time code into the session, whoever was signed in before
  const suiteLanding = path === "/suite";
  useEffect(() => {
    if (me === null && !publicPage && !invite && !suiteLanding) navigate("/signin");
    if (me && (publicPage || path === "/")) navigate((publicPage && nextPath()) || "/databases");
  }, [me, publicPage, invite, suiteLanding, path, navigate]);

  if (suiteLanding)
    return (
      <SuiteLanding
        onSignedIn={async () => {
          // a suite account works only for its organization (org_only): the console starts in its context
          orgState.setOwner("org");
          await refresh();
        }}
      />
    );
  if (me === undefined)
    return (
      <div className="center-screen">
        <Spinner label={t("common.loading")} />
      </div>
    );
  if (!me && invite) return <InvitePage signedIn={false} />;
  if (!me) return publicPage ? <AuthPage mode={path === "/signup" ? "signup" : "signin"} onSignedIn={refresh} /> : null;

  const signOut = async () => {
    await api.POST("/v1/auth/logout").catch(() => {});
    await session("/console/signout").catch(() => {});
    orgState.setOwner("me");
    setMe(null);
    navigate("/signin");
  };

  const nav: [string, string, string[]?][] = [
    [
      "/pods",
      t("nav.apps"),
      ["/pod-groups", "/builds", "/previews", "/cron-jobs", "/alerts", "/log-drains", "/volumes", "/templates"],
    ],
    ["/sites", t("nav.sites")],
    ["/buckets", t("nav.buckets")],
    ["/domains", t("nav.domains")],
    ["/databases", t("nav.databases")],
    ["/org", t("nav.org")],
    ...(isPartner ? ([["/partner", t("nav.partner")]] as [string, string][]) : []),
    ["/keys", t("nav.keys")],
    ["/billing", t("nav.billing")],
    ["/account", t("nav.account")],
  ];
  // a detail page names a resource of the context left: back to its section's list
  const switched = () => {
    const section = path.split("/")[1];
    if (path !== `/${section}`) navigate(`/${section}`);
  };
  return (
    <OrgProvider value={orgState}>
      <div className={`layout context-${orgState.owner}`}>
        <a className="skip" href="#main">
          {t("nav.skip")}
        </a>
        <header className="topbar">
          <Link to="/databases" className="brand">
            <span className="logo" aria-hidden="true">
              P
            </span>
            {t("brand")}
          </Link>
          <button
            type="button"
            className="btn ghost menu-toggle"
            aria-expanded={menuOpen}
            aria-controls="nav"
            onClick={() => setMenuOpen((o) => !o)}
          >
            {t("nav.menu")}
          </button>
          <nav id="nav" className={menuOpen ? "open" : ""} aria-label={t("nav.menu")}>
            {nav.map(([to, label, also]) => (
              <Link key={to} to={to} also={also}>
                {label}
              </Link>
            ))}
            <ContextSwitch onSwitched={switched} />
            <span className="who" title={me.email}>
              {me.display_name || me.email}
            </span>
            <button type="button" className="btn ghost" onClick={signOut}>
              {t("nav.signout")}
            </button>
          </nav>
        </header>
        <main id="main" tabIndex={-1}>
          <ContextBanner onSwitched={switched} />
          {/* a new context loads every list again */}
          <Page key={orgState.owner} path={path} me={me} onMeChanged={(m) => setMe(m)} onDeleted={() => setMe(null)} />
        </main>
      </div>
    </OrgProvider>
  );
}

function Page({
  path,
  me,
  onMeChanged,
  onDeleted,
}: {
  path: string;
  me: Me;
  onMeChanged: (m: Me) => void;
  onDeleted: () => void;
}) {
  const { t } = useI18n();
  if (path === "/databases" || path === "/") return <DatabasesPage />;
  if (path === "/databases/new") return <NewDatabasePage />;
  const db = /^\/databases\/([^/]+)$/.exec(path);
  if (db) return <DatabasePage id={decodeURIComponent(db[1])} />;
  if (path === "/pods") return <PodsPage />;
  if (path === "/pods/new") return <NewPodPage />;
  const pod = /^\/pods\/([^/]+)$/.exec(path);
  if (pod) return <PodPage id={decodeURIComponent(pod[1])} />;
  if (path === "/pod-groups") return <GroupsPage />;
  if (path === "/pod-groups/new") return <NewGroupPage />;
  const group = /^\/pod-groups\/([^/]+)$/.exec(path);
  if (group) return <GroupPage id={decodeURIComponent(group[1])} />;
  if (path === "/cron-jobs") return <CronJobsPage />;
  const cronJob = /^\/cron-jobs\/([^/]+)$/.exec(path);
  if (cronJob) return <CronJobPage id={decodeURIComponent(cronJob[1])} />;
  if (path === "/builds") return <BuildsPage />;
  if (path === "/previews") return <PreviewsPage />;
  if (path === "/alerts") return <AlertsPage />;
  if (path === "/log-drains") return <LogDrainsPage />;
  if (path === "/builds/new") return <NewBuildPage />;
  const build = /^\/builds\/([^/]+)$/.exec(path);
  if (build) return <BuildPage id={decodeURIComponent(build[1])} />;
  if (path === "/sites") return <SitesPage />;
  if (path === "/sites/new") return <NewSitePage />;
  const site = /^\/sites\/([^/]+)$/.exec(path);
  if (site) return <SitePage slug={decodeURIComponent(site[1])} />;
  if (path === "/domains") return <DomainsPage />;
  if (path === "/buckets") return <BucketsPage />;
  if (path === "/buckets/keys") return <BucketKeysPage />;
  const bucket = /^\/buckets\/([^/]+)$/.exec(path);
  if (bucket) return <BucketPage id={decodeURIComponent(bucket[1])} />;
  if (path === "/volumes") return <VolumesPage />;
  if (path === "/templates") return <TemplatesPage />;
  if (path === "/org") return <OrgPage me={me} />;
  if (path === "/org/suite") return <SuiteWizardPage />;
  if (path === "/partner") return <PartnerPage />;
  if (path === "/invite") return <InvitePage signedIn />;
  if (path === "/keys") return <KeysPage />;
  if (path === "/billing") return <BillingPage />;
  if (path === "/account") return <AccountPage me={me} onChanged={onMeChanged} onDeleted={onDeleted} />;
  return <p className="empty">{t("notFound")}</p>;
}
