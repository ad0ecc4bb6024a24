import { useState } from "react";
import { api, unwrap, type Db } from "../api";
import { useI18n, when } from "../i18n";
import { Link, useRouter } from "../router";
import { Card, ErrorNote, Field, Spinner, StateBadge, Submit, useAction, useLoad } from "../ui";

export const BUSY_STATES = ["creating"];
const SLUG = /^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/;
const SIZES = ["dev", "basic", "pro", "business"] as const;

/** The passwords and URLs a create answered with, kept in memory only until the detail page has shown them. */
export const justCreated = new Map<string, Db>();

export function DatabasesPage() {
  const { t, locale } = useI18n();
  // polled while any database is changing state, so the list follows it live
  const list = useLoad(
    async () => (await unwrap(api.GET("/v1/databases"))) as Db[],
    [],
    (dbs) => (dbs.some((d) => BUSY_STATES.includes(d.state)) ? 1500 : null),
  );
  return (
    <>
      <div className="page-head">
        <h1>{t("db.title")}</h1>
        <Link to="/databases/new" className="btn primary">
          {t("db.create")}
        </Link>
      </div>
      <ErrorNote error={list.error} />
      {!list.data && !list.error && <Spinner label={t("common.loading")} />}
      {list.data && list.data.length === 0 && (
        <Card>
          <p className="empty">{t("db.empty")}</p>
        </Card>
      )}
      {list.data && list.data.length > 0 && (
        <Card>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>{t("db.name")}</th>
                  <th>{t("db.state")}</th>
                  <th>{t("db.size")}</th>
                  <th>{t("db.version")}</th>
                  <th>{t("db.created")}</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((d) => (
                  <tr key={d.id}>
                    <td>
                      <Link to={`/databases/${d.id}`}>{d.name}</Link>
                    </td>
                    <td>
                      <StateBadge state={d.state} />
                    </td>
                    <td>
                      {d.size} · {d.storage_gb} GB
                    </td>
                    <td>PostgreSQL {d.version}</td>
                    <td>{when(locale, d.created_at)}</td>
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

export function NewDatabasePage() {
  const { t } = useI18n();
  const { navigate } = useRouter();
  const [name, setName] = useState("");
  const [size, setSize] = useState<(typeof SIZES)[number]>("dev");
  const [version, setVersion] = useState<16 | 17>(17);
  const [storage, setStorage] = useState("10");
  const [errors, setErrors] = useState<{ name?: string; storage?: string }>({});
  const action = useAction(async () => {
    const created = await unwrap(
      api.POST("/v1/databases", { body: { name, size, version, storage_gb: Number(storage), engine: "postgres" } }),
    );
    justCreated.set(created.id, created as Db);
    navigate(`/databases/${created.id}`);
  });
  return (
    <>
      <div className="page-head">
        <h1>{t("db.create")}</h1>
        <Link to="/databases" className="btn ghost">
          {t("common.back")}
        </Link>
      </div>
      <Card>
        <form
          className="narrow"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            const n = Number(storage);
            const errs = {
              name: !name ? t("v.required") : SLUG.test(name) ? undefined : t("v.slug"),
              storage: /^\d+$/.test(storage) && n >= 1 && n <= 16384 ? undefined : t("v.range", { min: 1, max: 16384 }),
            };
            setErrors(errs);
            if (!errs.name && !errs.storage) void action.run();
          }}
        >
          <Field label={t("db.name")} error={errors.name} hint={t("db.nameHint")}>
            {({ id, describedBy, invalid }) => (
              <input
                id={id}
                name="db-name"
                autoComplete="off"
                aria-describedby={describedBy}
                aria-invalid={invalid}
                value={name}
                onChange={(e) => setName(e.target.value.toLowerCase())}
              />
            )}
          </Field>
          <Field label={t("db.size")}>
            {({ id }) => (
              <select id={id} name="size" value={size} onChange={(e) => setSize(e.target.value as typeof size)}>
                {SIZES.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label={t("db.version")}>
            {({ id }) => (
              <select
                id={id}
                name="version"
                value={version}
                onChange={(e) => setVersion(Number(e.target.value) as 16 | 17)}
              >
                <option value={17}>17</option>
                <option value={16}>16</option>
              </select>
            )}
          </Field>
          <Field label={t("db.storage")} error={errors.storage}>
            {({ id, describedBy, invalid }) => (
              <input
                id={id}
                name="storage"
                inputMode="numeric"
                aria-describedby={describedBy}
                aria-invalid={invalid}
                value={storage}
                onChange={(e) => setStorage(e.target.value)}
              />
            )}
          </Field>
          <ErrorNote error={action.error} />
          <Submit busy={action.busy}>{t("db.create")}</Submit>
        </form>
      </Card>
    </>
  );
}
