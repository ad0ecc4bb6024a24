import { api, unwrap } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { Link } from "../router";
import { ListPage } from "../lists";
import { Card, useLoad } from "../ui";
import { AppsTabs } from "./apps-common";

/** GET /v1/previews's items (typed here until the SDK's schema is generated again with the previews routes). */
interface Preview {
  id: string;
  app_name: string;
  project: string;
  merge_request_iid: number;
  source_branch: string;
  state: string;
  commit: string;
  deployed_commit: string | null;
  url: string;
  pod_id: string | null;
  error: string | null;
  created_at: string;
}

interface PreviewLink {
  id: string;
  project: string;
  app_name: string;
  webhook_url: string;
}

// the previews routes are not in the generated schema yet (npm run sdk:generate adds them): an untyped path
const get = (path: string) => (api.GET as (p: string) => Promise<any>)(path);
const settling = (p: Preview) => ["building", "deploying", "removing"].includes(p.state);

/** Preview environments with their state and links, and the linked GitLab projects. */
export function PreviewsPage() {
  const { t, locale } = useI18n();
  const list = useLoad(
    async () => ((await unwrap(get("/v1/previews"))) as { items: Preview[] }).items,
    [],
    (rows) => (rows.some(settling) ? 3000 : null),
  );
  const links = useLoad(async () => ((await unwrap(get("/v1/previews/links"))) as { items: PreviewLink[] }).items, []);
  return (
    <>
      <AppsTabs />
      <ListPage
        title={t("preview.title")}
        intro={t("preview.intro")}
        list={list}
        empty={t("preview.empty")}
        testId="previews"
        rowData={(p) => ({ "data-state": p.state })}
        columns={[
          {
            head: t("preview.mr"),
            cell: (p) => (
              <>
                <strong>
                  {p.project} !{p.merge_request_iid}
                </strong>
                <div className="muted small">
                  {p.source_branch} · {when(locale, p.created_at)}
                </div>
              </>
            ),
          },
          {
            head: t("preview.state"),
            cell: (p) => (
              <span className={`badge state-${p.state}`} data-state={p.state} title={p.error ?? undefined}>
                {settling(p) && <span className="spinner tiny" aria-hidden="true" />}
                {t(`preview.state.${p.state}` as MessageKey)}
              </span>
            ),
          },
          {
            head: t("preview.url"),
            cell: (p) =>
              p.state === "removed" ? (
                <span className="muted">—</span>
              ) : (
                <a href={p.url} target="_blank" rel="noreferrer">
                  {p.url.replace(/^https?:\/\//, "")}
                </a>
              ),
          },
          {
            head: t("preview.commit"),
            className: "hide-sm",
            cell: (p) => <code>{(p.deployed_commit ?? p.commit).slice(0, 8)}</code>,
          },
          {
            head: t("preview.pod"),
            className: "hide-sm",
            cell: (p) =>
              p.pod_id ? <Link to={`/pods/${p.pod_id}`}>{`${p.app_name}-mr-${p.merge_request_iid}`}</Link> : "—",
          },
        ]}
      />
      <Card title={t("preview.links")}>
        {links.data?.length ? (
          <ul>
            {links.data.map((l) => (
              <li key={l.id}>
                <strong>{l.project}</strong> → {l.app_name}-mr-&lt;n&gt; · {t("preview.webhook")}:{" "}
                <code>{l.webhook_url}</code>
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">{t("preview.noLinks")}</p>
        )}
      </Card>
    </>
  );
}
