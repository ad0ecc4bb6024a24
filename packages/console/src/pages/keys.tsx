import { useState } from "react";
import { api, unwrap } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { TextField } from "../fields";
import { Loaded, ResourceTable, srOnly } from "../lists";
import { Card, ErrorNote, Field, Secret, Submit, useAction, useLoad } from "../ui";

interface Key {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

/** Resources a key may reach, each readable and writable; databases can be limited to instances here. */
const RESOURCES = [
  "databases",
  "backups",
  "pods",
  "volumes",
  "pod-templates",
  "builds",
  "static",
  "domains",
  "buckets",
  "registry",
  "billing",
] as const;
const EXPIRIES = ["never", "7", "30", "90", "365"] as const;

export function KeysPage() {
  const { t, locale } = useI18n();
  const keys = useLoad(async () => (await unwrap(api.GET("/v1/api-keys"))) as Key[], []);
  const [issued, setIssued] = useState<{ name: string; key: string } | null>(null);
  const revoke = useAction(async (key: Key) => {
    if (!window.confirm(t("keys.revokeConfirm", { name: key.name }))) return;
    await unwrap(api.DELETE("/v1/api-keys/{id}", { params: { path: { id: key.id } } }));
    keys.reload();
  });
  return (
    <>
      <h1>{t("keys.title")}</h1>
      <p className="muted">{t("keys.intro")}</p>
      <div className="grid two">
        <IssueKey
          onIssued={(k) => {
            setIssued(k);
            keys.reload();
          }}
        />
        {issued && (
          <Card title={issued.name}>
            <p className="note warn">{t("keys.secret")}</p>
            <Secret label="API key" value={issued.key} />
          </Card>
        )}
      </div>
      <Card title={t("keys.title")}>
        <Loaded list={keys} error={keys.error || revoke.error} empty={t("keys.empty")} spinner={false}>
          {(rows) => (
            <ResourceTable
              rows={rows}
              columns={[
                { head: t("keys.name"), cell: (k) => k.name },
                { head: t("keys.prefix"), cell: (k) => <code>{k.prefix}…</code> },
                {
                  head: t("keys.scopes"),
                  cell: (k) =>
                    k.scopes.map((s) => (
                      <span className="chip" key={s}>
                        {s}
                      </span>
                    )),
                },
                {
                  head: t("keys.expiry"),
                  cell: (k) => (k.expires_at ? when(locale, k.expires_at) : t("common.never")),
                },
                {
                  head: t("keys.lastUsed"),
                  cell: (k) => (k.last_used_at ? when(locale, k.last_used_at) : t("common.never")),
                },
                {
                  head: srOnly(t("db.actions")),
                  cellClass: "right",
                  cell: (k) => (
                    <button type="button" className="btn small danger" onClick={() => void revoke.run(k)}>
                      {t("keys.revoke")}
                    </button>
                  ),
                },
              ]}
            />
          )}
        </Loaded>
      </Card>
    </>
  );
}

function IssueKey({ onIssued }: { onIssued: (k: { name: string; key: string }) => void }) {
  const { t } = useI18n();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Set<string>>(new Set(["databases:read"]));
  const [expiry, setExpiry] = useState<(typeof EXPIRIES)[number]>("90");
  const [instances, setInstances] = useState<string[]>([]);
  const [errors, setErrors] = useState<{ name?: string; scopes?: string }>({});
  const dbs = useLoad(async () => (await unwrap(api.GET("/v1/databases"))) as { id: string; name: string }[], []);
  const action = useAction(async () => {
    const chosen = [...scopes].flatMap((s) =>
      s.startsWith("databases:") && instances.length ? instances.map((id) => `${s}:${id}`) : [s],
    );
    const expires_at =
      expiry === "never" ? undefined : new Date(Date.now() + Number(expiry) * 86_400_000).toISOString();
    const created = await unwrap(api.POST("/v1/api-keys", { body: { name: name.trim(), scopes: chosen, expires_at } }));
    onIssued({ name: created.name, key: created.key });
    setName("");
  });
  const toggle = (s: string) =>
    setScopes((prev) => {
      const next = new Set(prev);
      if (next.has(s)) next.delete(s);
      else next.add(s);
      return next;
    });
  return (
    <Card title={t("keys.issue")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const errs = {
            name: !name.trim() ? t("v.required") : name.length > 100 ? t("v.range", { min: 1, max: 100 }) : undefined,
            scopes: scopes.size ? undefined : t("v.scopes"),
          };
          setErrors(errs);
          if (!errs.name && !errs.scopes) void action.run();
        }}
      >
        <TextField label={t("keys.name")} error={errors.name} name="key-name" value={name} onValue={setName} />
        <fieldset className={errors.scopes ? "invalid" : ""}>
          <legend>{t("keys.scopes")}</legend>
          <div className="scope-grid">
            {RESOURCES.map((r) => (
              <div key={r} className="scope-row">
                <span>{r}</span>
                {(["read", "write"] as const).map((a) => (
                  <label key={a} className="check">
                    <input
                      type="checkbox"
                      name={`${r}:${a}`}
                      checked={scopes.has(`${r}:${a}`)}
                      onChange={() => toggle(`${r}:${a}`)}
                    />
                    {t(`keys.${a}` as MessageKey)}
                  </label>
                ))}
              </div>
            ))}
          </div>
          {errors.scopes && <p className="field-error">{errors.scopes}</p>}
        </fieldset>
        <Field label={t("keys.expiry")}>
          {({ id }) => (
            <select id={id} name="expiry" value={expiry} onChange={(e) => setExpiry(e.target.value as typeof expiry)}>
              {EXPIRIES.map((x) => (
                <option key={x} value={x}>
                  {t(`keys.exp.${x}` as MessageKey)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t("keys.instances")} hint={instances.length ? undefined : t("keys.allInstances")}>
          {({ id, describedBy }) => (
            <select
              id={id}
              multiple
              aria-describedby={describedBy}
              value={instances}
              onChange={(e) => setInstances([...e.target.selectedOptions].map((o) => o.value))}
            >
              {(dbs.data ?? []).map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <ErrorNote error={action.error} />
        <Submit busy={action.busy}>{t("keys.issue")}</Submit>
      </form>
    </Card>
  );
}
