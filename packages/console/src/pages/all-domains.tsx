import { api, unwrap, type Domain } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { Link } from "../router";
import { DeleteButton, ListPage, srOnly } from "../lists";
import { useAction, useLoad } from "../ui";

/** Where an app's page is, by the kind the domain recorded. */
export function appPath(app: Domain["app"]): string {
  if (app.kind === "site") return `/sites/${app.slug}`;
  if (app.kind === "group") return `/pod-groups/${app.slug}`;
  return `/pods/${app.slug}`;
}

/**
 * Every custom domain of the account, with whether its app still exists. A domain of a deleted app is not
 * served and holds its name until it is deleted here (orphan_only, so a domain whose app came back stays).
 */
export function DomainsPage() {
  const { t, locale } = useI18n();
  const list = useLoad(async () => (await unwrap(api.GET("/v1/domains"))) as Domain[], []);
  const remove = useAction(async (d: Domain) => {
    const key = d.app_exists ? "alld.deleteConfirm" : "alld.deleteOrphanConfirm";
    if (!window.confirm(t(key, { domain: d.domain, app: d.app.slug }))) return;
    const params = { params: { path: { id: d.id }, query: d.app_exists ? {} : { orphan_only: "1" as const } } };
    await unwrap(api.DELETE("/v1/domains/{id}", params));
    list.reload();
  });
  const orphans = (list.data ?? []).filter((d) => !d.app_exists).length;
  return (
    <ListPage
      title={t("alld.title")}
      intro={t("alld.intro")}
      list={list}
      error={list.error || remove.error}
      note={
        orphans > 0 && (
          <p className="note warn">{orphans === 1 ? t("alld.orphan") : t("alld.orphans", { n: orphans })}</p>
        )
      }
      empty={t("alld.empty")}
      testId="all-domains"
      rowData={(d) => ({ "data-domain": d.domain })}
      columns={[
        { head: t("alld.domain"), cell: (d) => <code>{d.domain}</code> },
        {
          head: t("alld.app"),
          cell: (d) => (
            <>
              <span className="muted small">{t(`alld.kind.${d.app.kind}` as MessageKey)} </span>
              {d.app_exists ? (
                <Link to={appPath(d.app)}>{d.app.slug}</Link>
              ) : (
                <>
                  <span>{d.app.slug}</span>{" "}
                  <span className="badge state-failed" data-state="app-gone">
                    {t("dom.appGone")}
                  </span>
                </>
              )}
            </>
          ),
        },
        {
          head: t("sites.status"),
          cell: (d) => (
            <span
              className={`badge ${d.status === "verified" ? "state-running" : "state-queued"}`}
              data-state={d.status}
            >
              {t(`dom.${d.status}` as MessageKey)}
            </span>
          ),
        },
        { head: t("alld.added"), className: "hide-sm", cell: (d) => when(locale, d.created_at) },
        {
          head: srOnly(t("db.actions")),
          cellClass: "right",
          cell: (d) => <DeleteButton target={d.domain} busy={remove.busy} onClick={() => void remove.run(d)} />,
        },
      ]}
    />
  );
}
