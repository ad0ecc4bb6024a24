import { useState } from "react";
import type { paths } from "@hosting-platform/sdk";
import { api, unwrap } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { Link } from "../router";
import { Card, CopyButton, ErrorNote, Field, Notice, Secret, Spinner, Submit, useAction, useLoad } from "../ui";
import { bucketPath, BucketsTabs, type Bucket } from "./buckets";

type AccessKey = paths["/v1/buckets/keys"]["get"]["responses"][200]["content"]["application/json"][number];
type Permission = AccessKey["permission"];
const PERMISSIONS: Permission[] = ["read_write", "read"];

/** S3 access keys: the list with permission and buckets, issuing one (its secret shown once), revoking. */
export function BucketKeysPage() {
  const { t } = useI18n();
  const keys = useLoad(async () => (await unwrap(api.GET("/v1/buckets/keys"))) as AccessKey[], []);
  const buckets = useLoad(async () => (await unwrap(api.GET("/v1/buckets"))) as Bucket[], []);
  const [issued, setIssued] = useState<AccessKey | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  const revoke = useAction(async (key: AccessKey) => {
    if (!window.confirm(t("bk.revokeConfirm", { name: key.name }))) return;
    await unwrap(api.DELETE("/v1/buckets/keys/{id}", { params: { path: { id: key.id } } }));
    setRevoked(key.name);
    if (issued?.id === key.id) setIssued(null);
    keys.reload();
  });
  return (
    <>
      <BucketsTabs />
      <div className="page-head">
        <div>
          <h1>{t("bk.keysTitle")}</h1>
          <p className="muted">{t("bk.keysIntro")}</p>
        </div>
      </div>
      {issued && <IssuedKey issued={issued} onDone={() => setIssued(null)} />}
      <div className="grid side">
        <Card title={t("bk.keysTitle")}>
          <ErrorNote error={keys.error || revoke.error} />
          {revoked && <Notice>{t("bk.revoked", { name: revoked })}</Notice>}
          {!keys.data && !keys.error && <Spinner label={t("common.loading")} />}
          {keys.data && keys.data.length === 0 && <p className="empty">{t("bk.keysEmpty")}</p>}
          {keys.data && keys.data.length > 0 && (
            <KeyTable keys={keys.data} buckets={buckets.data ?? []} busy={revoke.busy} onRevoke={revoke.run} />
          )}
        </Card>
        <IssueKey
          buckets={buckets.data}
          onIssued={(k) => {
            setIssued(k);
            setRevoked(null);
            keys.reload();
          }}
        />
      </div>
    </>
  );
}

function KeyTable(props: { keys: AccessKey[]; buckets: Bucket[]; busy: boolean; onRevoke: (k: AccessKey) => unknown }) {
  const { t, locale } = useI18n();
  const byId = new Map(props.buckets.map((b) => [b.id, b]));
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th>{t("bk.keyName")}</th>
            <th>{t("bk.access")}</th>
            <th className="hide-sm">{t("bk.lastUsed")}</th>
            <th>
              <span className="sr-only">{t("bk.revoke")}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((k) => (
            <tr key={k.id} data-key={k.access_key_id}>
              <td>
                {k.name}
                <code className="muted small sub">{k.access_key_id}</code>
              </td>
              <td className="key-access">
                <span className={`badge perm-${k.permission}`}>{t(`bk.perm.${k.permission}` as MessageKey)}</span>
                <div className="key-buckets">
                  {k.bucket_ids === null ? (
                    <span className="muted small">{t("bk.allBuckets")}</span>
                  ) : (
                    k.bucket_ids.map((id) => {
                      const b = byId.get(id);
                      return b ? (
                        <Link key={id} to={bucketPath(b)} className="chip">
                          {b.name}
                        </Link>
                      ) : (
                        <span key={id} className="chip">
                          {id.slice(0, 8)}
                        </span>
                      );
                    })
                  )}
                </div>
              </td>
              <td className="hide-sm">{k.last_used_at ? when(locale, k.last_used_at) : t("common.never")}</td>
              <td className="right">
                <button
                  type="button"
                  className="btn small danger"
                  disabled={props.busy}
                  aria-label={`${t("bk.revoke")} ${k.name}`}
                  onClick={() => void props.onRevoke(k)}
                >
                  {t("bk.revoke")}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The new key's id and secret, once, with copy buttons, the endpoint and region beside them. */
function IssuedKey({ issued, onDone }: { issued: AccessKey; onDone: () => void }) {
  const { t } = useI18n();
  return (
    <section className="card issued-key" data-testid="issued-key" aria-live="polite">
      <header className="card-head">
        <h2>{t("bk.issuedTitle", { name: issued.name })}</h2>
      </header>
      <p className="note warn">{t("bk.secretOnce")}</p>
      <Secret label={t("bk.accessKeyId")} value={issued.access_key_id} />
      <Secret label={t("bk.secretKey")} value={issued.secret_access_key ?? ""} />
      <dl className="props">
        <dt>{t("bk.endpoint")}</dt>
        <dd className="copy-line">
          <code>{issued.endpoint}</code>
          <CopyButton text={issued.endpoint} label={t("bk.endpoint")} />
        </dd>
        <dt>{t("bk.region")}</dt>
        <dd>
          <code>{issued.region}</code>
        </dd>
      </dl>
      <button type="button" className="btn" onClick={onDone}>
        {t("bk.done")}
      </button>
    </section>
  );
}

function IssueKey({ buckets, onIssued }: { buckets: Bucket[] | null; onIssued: (k: AccessKey) => void }) {
  const { t } = useI18n();
  // a bucket's page links here with ?bucket=<id>: the key is for that bucket
  const [preset] = useState(() => new URLSearchParams(window.location.search).get("bucket"));
  const [name, setName] = useState("");
  const [permission, setPermission] = useState<Permission>("read_write");
  const [all, setAll] = useState(!preset);
  const [chosen, setChosen] = useState<Set<string>>(new Set(preset ? [preset] : []));
  const [errors, setErrors] = useState<{ name?: string; buckets?: string }>({});
  const action = useAction(async () => {
    const body = { name: name.trim(), permission, ...(all ? {} : { bucket_ids: [...chosen] }) };
    onIssued((await unwrap(api.POST("/v1/buckets/keys", { body }))) as AccessKey);
    setName("");
  });
  const toggle = (id: string) =>
    setChosen((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  return (
    <Card title={t("bk.issue")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const n = name.trim();
          const errs = {
            name: !n ? t("v.required") : n.length > 100 ? t("v.range", { min: 1, max: 100 }) : undefined,
            buckets: all || chosen.size ? undefined : t("bk.chooseBuckets"),
          };
          setErrors(errs);
          if (!errs.name && !errs.buckets) void action.run();
        }}
      >
        <Field label={t("bk.keyName")} error={errors.name} hint={t("bk.keyNameHint")}>
          {({ id, describedBy, invalid }) => (
            <input
              id={id}
              name="key-name"
              autoComplete="off"
              aria-describedby={describedBy}
              aria-invalid={invalid}
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          )}
        </Field>
        <fieldset>
          <legend>{t("bk.permission")}</legend>
          <div className="check-list">
            {PERMISSIONS.map((p) => (
              <label key={p} className="check radio-two">
                <input type="radio" name="permission" checked={permission === p} onChange={() => setPermission(p)} />
                <span>
                  {t(`bk.perm.${p}` as MessageKey)}
                  <span className="hint sub">{t(`bk.permHint.${p}` as MessageKey)}</span>
                </span>
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset className={errors.buckets ? "invalid" : ""}>
          <legend>{t("bk.scope")}</legend>
          <div className="check-list">
            <label className="check">
              <input type="radio" name="scope" checked={all} onChange={() => setAll(true)} />
              {t("bk.scopeAll")}
            </label>
            <label className="check">
              <input type="radio" name="scope" checked={!all} onChange={() => setAll(false)} />
              {t("bk.scopeSome")}
            </label>
          </div>
          {!all && (
            <div className="check-list bucket-choices">
              {buckets?.length === 0 && <p className="hint">{t("bk.noBuckets")}</p>}
              {buckets?.map((b) => (
                <label key={b.id} className="check">
                  <input
                    type="checkbox"
                    checked={chosen.has(b.id) || chosen.has(b.name)}
                    onChange={() => toggle(chosen.has(b.name) ? b.name : b.id)}
                  />
                  <code>{b.name}</code>
                </label>
              ))}
            </div>
          )}
          {errors.buckets && <p className="field-error">{errors.buckets}</p>}
        </fieldset>
        <ErrorNote error={action.error} />
        <Submit busy={action.busy}>{t("bk.issue")}</Submit>
      </form>
    </Card>
  );
}
