import { useState } from "react";
import { api, unwrap, type Db } from "../api";
import { useI18n, when } from "../i18n";
import { Link, useRouter } from "../router";
import { NameField, TextField } from "../fields";
import { ListPage, PageHead } from "../lists";
import { Card, ErrorNote, Field, StateBadge, Submit, useAction, useEventStream, useLoad } from "../ui";

export const BUSY_STATES = ["creating"];
/** the events that change what the database pages show */
export const DATABASE_EVENTS = ["database.running", "database.failed", "database.backup_failed"];
const SLUG = /^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/;
const SIZES = ["dev", "basic", "pro", "business"] as const;

/** The passwords and URLs a create answered with, kept in memory only until the detail page has shown them. */
export const justCreated = new Map<string, Db>();

export function DatabasesPage() {
  const { t, locale } = useI18n();
  // follows the live event stream; polled while a database is changing state only as a fallback (fast while
  // the stream is down, slowly beside it for changes no event names)
  let live = false;
  const list = useLoad(
    async () => (await unwrap(api.GET("/v1/databases"))) as Db[],
    [],
    (dbs) => (dbs.some((d) => BUSY_STATES.includes(d.state)) ? (live ? 10_000 : 1500) : null),
  );
  live = useEventStream(DATABASE_EVENTS, list.reload);
  return (
    <ListPage
      title={t("db.title")}
      create={{ to: "/databases/new", label: t("db.create") }}
      list={list}
      empty={t("db.empty")}
      columns={[
        { head: t("db.name"), cell: (d) => <Link to={`/databases/${d.id}`}>{d.name}</Link> },
        { head: t("db.state"), cell: (d) => <StateBadge state={d.state} /> },
        { head: t("db.size"), cell: (d) => `${d.size} · ${d.storage_gb} GB` },
        { head: t("db.version"), cell: (d) => `PostgreSQL ${d.version}` },
        { head: t("db.created"), cell: (d) => when(locale, d.created_at) },
      ]}
    />
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
      <PageHead title={t("db.create")} back="/databases" />
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
          <NameField
            label={t("db.name")}
            name="db-name"
            value={name}
            onValue={setName}
            error={errors.name}
            hint={t("db.nameHint")}
          />
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
          <TextField
            label={t("db.storage")}
            error={errors.storage}
            name="storage"
            inputMode="numeric"
            value={storage}
            onValue={setStorage}
          />
          <ErrorNote error={action.error} />
          <Submit busy={action.busy}>{t("db.create")}</Submit>
        </form>
      </Card>
    </>
  );
}
