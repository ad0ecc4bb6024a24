import { useState } from "react";
import { api, unwrap, type Db } from "../api";
import { useI18n } from "../i18n";
import { Card, ErrorNote, Field, Notice, Submit, useAction, useLoad } from "../ui";

const CIDR = /^(?:(?:\d{1,3}\.){3}\d{1,3}\/\d{1,2}|[0-9a-fA-F:]+\/\d{1,3})$/;
const path = (id: string) => ({ params: { path: { id } } });

/** One CIDR per line, an optional label after it. */
export function AllowlistEditor({ db, onSaved }: { db: Db; onSaved: () => void }) {
  const { t } = useI18n();
  const [text, setText] = useState(() => (db.allowlist ?? []).map((a) => `${a.cidr} ${a.label}`.trim()).join("\n"));
  const [invalid, setInvalid] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const entries = () =>
    text
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .map((l) => {
        const [cidr, ...label] = l.split(/\s+/);
        return { cidr, label: label.join(" ") };
      });
  const action = useAction(async () => {
    await unwrap(api.PATCH("/v1/databases/{id}/allowlist", { ...path(db.id), body: { allowlist: entries() } }));
    setDone(true);
    onSaved();
  });
  return (
    <Card title={t("db.allowlist")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setDone(false);
          const bad = entries().some((x) => !CIDR.test(x.cidr) || x.label.length > 100);
          setInvalid(bad ? t("v.cidr") : null);
          if (!bad) void action.run();
        }}
      >
        <Field label={t("db.allowlist")} hint={t("db.allowlistHint")} error={invalid}>
          {({ id, describedBy, invalid }) => (
            <textarea
              id={id}
              rows={4}
              spellCheck={false}
              placeholder="203.0.113.0/24 office"
              aria-describedby={describedBy}
              aria-invalid={invalid}
              value={text}
              onChange={(e) => setText(e.target.value)}
            />
          )}
        </Field>
        <ErrorNote error={action.error} />
        {done && <Notice>{t("common.saved")}</Notice>}
        <Submit busy={action.busy}>{t("common.save")}</Submit>
      </form>
    </Card>
  );
}

export function HaAndPool({ db }: { db: Db }) {
  const { t } = useI18n();
  const ha = useLoad(async () => await unwrap(api.GET("/v1/databases/{id}/ha", path(db.id))), [db.id, db.ha_enabled]);
  const pool = useLoad(async () => await unwrap(api.GET("/v1/databases/{id}/pool", path(db.id))), [db.id]);
  const setHa = useAction(async (on: boolean) => {
    if (on) await unwrap(api.POST("/v1/databases/{id}/ha", path(db.id)));
    else await unwrap(api.DELETE("/v1/databases/{id}/ha", path(db.id)));
    ha.reload();
  });
  const setPool = useAction(async (on: boolean) => {
    await unwrap(api.PUT("/v1/databases/{id}/pool", { ...path(db.id), body: { enabled: on } }));
    pool.reload();
  });
  const toggle = (on: boolean | undefined, run: (v: boolean) => void, busy: boolean) => (
    <div className="toggle-row">
      <span className={`badge ${on ? "state-running" : "state-stopped"}`}>{on ? t("common.on") : t("common.off")}</span>
      <button
        type="button"
        className="btn small"
        disabled={busy || on === undefined || db.state !== "running"}
        onClick={() => run(!on)}
      >
        {on ? t("db.disable") : t("db.enable")}
      </button>
    </div>
  );
  return (
    <Card title={`${t("db.ha")} · ${t("db.pool")}`}>
      <h3>{t("db.ha")}</h3>
      <p className="muted">{t("db.haHint")}</p>
      {toggle(ha.data?.enabled, (v) => void setHa.run(v), setHa.busy)}
      <ErrorNote error={setHa.error || ha.error} />
      <h3>{t("db.pool")}</h3>
      <p className="muted">{t("db.poolHint")}</p>
      {toggle(pool.data?.enabled, (v) => void setPool.run(v), setPool.busy)}
      {pool.data?.pooled_url && <code className="block">{pool.data.pooled_url}</code>}
      <ErrorNote error={setPool.error || pool.error} />
    </Card>
  );
}
