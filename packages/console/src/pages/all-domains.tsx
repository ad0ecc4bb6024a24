import { api, unwrap, type Domain } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { Link } from "../router";
import { Card, ErrorNote, Spinner, useAction, useLoad } from "../ui";

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
    <>
      <div className="page-head">
        <div>
          <h1>{t("alld.title")}</h1>
          <p className="muted">{t("alld.intro")}</p>
        </div>
      </div>
      <ErrorNote error={list.error || remove.error} />
      {orphans > 0 && (
        <p className="note warn">{orphans === 1 ? t("alld.orphan") : t("alld.orphans", { n: orphans })}</p>
      )}
      {!list.data && !list.error && <Spinner label={t("common.loading")} />}
      {list.data && list.data.length === 0 && (
        <Card>
          <p className="empty">{t("alld.empty")}</p>
        </Card>
      )}
      {list.data && list.data.length > 0 && (
        <Card>
          <div className="table-wrap">
            <table data-testid="all-domains">
              <thead>
                <tr>
                  <th>{t("alld.domain")}</th>
                  <th>{t("alld.app")}</th>
                  <th>{t("sites.status")}</th>
                  <th className="hide-sm">{t("alld.added")}</th>
                  <th>
                    <span className="sr-only">{t("db.actions")}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((d) => (
                  <tr key={d.id} data-domain={d.domain}>
                    <td>
                      <code>{d.domain}</code>
                    </td>
                    <td>
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
                    </td>
                    <td>
                      <span
                        className={`badge ${d.status === "verified" ? "state-running" : "state-queued"}`}
                        data-state={d.status}
                      >
                        {t(`dom.${d.status}` as MessageKey)}
                      </span>
                    </td>
                    <td className="hide-sm">{when(locale, d.created_at)}</td>
                    <td className="right">
                      <button
                        type="button"
                        className="btn small danger"
                        disabled={remove.busy}
                        aria-label={`${t("common.delete")} ${d.domain}`}
                        onClick={() => void remove.run(d)}
                      >
                        {t("common.delete")}
                      </button>
                    </td>
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
