import { useState } from "react";
import type { paths } from "@hosting-platform/sdk";
import { api, unwrap } from "../api";
import { useI18n, when, type Translate } from "../i18n";
import { Link, useRouter } from "../router";
import { Card, ErrorNote, Field, Spinner, Submit, useAction, useLoad } from "../ui";
import { bytes } from "../upload";

export type Bucket = paths["/v1/buckets/{id}"]["get"]["responses"][200]["content"]["application/json"];

/** The console path of a bucket: its name, or its id for a bucket named like a sub-page ("keys"). */
export const bucketPath = (b: Pick<Bucket, "id" | "name">) => `/buckets/${b.name === "keys" ? b.id : b.name}`;

/** "12 objects", in the page's language. */
export const objectsText = (t: Translate, n: number) => (n === 1 ? t("bk.oneObject") : t("bk.objectCount", { n }));

/** S3's bucket naming rules (as the API checks them), each broken rule in words; undefined when the name is fine. */
export function bucketNameProblem(name: string, t: Translate): string | undefined {
  if (!name) return t("v.required");
  if (name.length < 3 || name.length > 63) return t("bk.v.length");
  if (!/^[a-z0-9.-]+$/.test(name)) return t("bk.v.chars");
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name)) return t("bk.v.ends");
  if (name.includes("..")) return t("bk.v.dots");
  if (/^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)) return t("bk.v.ip");
  for (const x of ["xn--", "sthree-", "amzn-s3-demo-"]) if (name.startsWith(x)) return t("bk.v.prefix", { x });
  for (const x of ["-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"])
    if (name.endsWith(x)) return t("bk.v.suffix", { x });
  return undefined;
}

/** Buckets and their access keys, as two tabs of one section ("Buckets" is current on a bucket's page too). */
export function BucketsTabs() {
  const { t } = useI18n();
  const { path, navigate } = useRouter();
  const keys = path === "/buckets/keys";
  const tab = (to: string, label: string, current: boolean) => (
    <a
      href={to}
      aria-current={current ? "page" : undefined}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {label}
    </a>
  );
  return (
    <nav className="tabs" aria-label={t("bk.sections")}>
      {tab("/buckets", t("bk.tabBuckets"), !keys)}
      {tab("/buckets/keys", t("bk.tabKeys"), keys)}
    </nav>
  );
}

export function BucketsPage() {
  const { t, locale } = useI18n();
  const list = useLoad(async () => (await unwrap(api.GET("/v1/buckets"))) as Bucket[], []);
  return (
    <>
      <BucketsTabs />
      <div className="page-head">
        <div>
          <h1>{t("bk.title")}</h1>
          <p className="muted">{t("bk.intro")}</p>
        </div>
      </div>
      <div className="grid side">
        <Card title={t("bk.title")}>
          <ErrorNote error={list.error} />
          {!list.data && !list.error && <Spinner label={t("common.loading")} />}
          {list.data && list.data.length === 0 && <p className="empty">{t("bk.empty")}</p>}
          {list.data && list.data.length > 0 && (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>{t("bk.name")}</th>
                    <th>{t("bk.endpoint")}</th>
                    <th className="hide-sm">{t("bk.region")}</th>
                    <th className="right">{t("bk.size")}</th>
                    <th className="hide-sm">{t("bk.created")}</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.map((b) => (
                    <tr key={b.id} data-bucket={b.name}>
                      <td>
                        <Link to={bucketPath(b)} className="bucket-name">
                          {b.name}
                        </Link>
                      </td>
                      <td>
                        <code className="clip" data-testid="endpoint">
                          {b.endpoint}
                        </code>
                      </td>
                      <td className="hide-sm">{b.region}</td>
                      <td className="right num">
                        <span className="size">{bytes(b.size_bytes, locale)}</span>
                        <span className="muted small sub">{objectsText(t, b.object_count)}</span>
                      </td>
                      <td className="hide-sm">{when(locale, b.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Card>
        <NewBucket />
      </div>
    </>
  );
}

function NewBucket() {
  const { t } = useI18n();
  const { navigate } = useRouter();
  const [name, setName] = useState("");
  const [error, setError] = useState<string | undefined>();
  const action = useAction(async () => {
    const created = await unwrap(api.POST("/v1/buckets", { body: { name } }));
    navigate(bucketPath(created));
  });
  return (
    <Card title={t("bk.create")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const problem = bucketNameProblem(name, t);
          setError(problem);
          if (!problem) void action.run();
        }}
      >
        <Field label={t("bk.name")} error={error} hint={t("bk.nameHint")}>
          {({ id, describedBy, invalid }) => (
            <input
              id={id}
              name="bucket-name"
              className="mono"
              autoComplete="off"
              spellCheck={false}
              maxLength={63}
              aria-describedby={describedBy}
              aria-invalid={invalid}
              value={name}
              onChange={(e) => setName(e.target.value.trim())}
            />
          )}
        </Field>
        <ErrorNote error={action.error} />
        <Submit busy={action.busy}>{t("bk.create")}</Submit>
      </form>
    </Card>
  );
}
