import { useState } from "react";
import { api, unwrap, type Autosetup, type DnsProvider, type Domain, type DomainCheck } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { CopyField, TextField } from "../fields";
import { ErrorNote, Notice, Spinner, Submit, useAction, useLoad } from "../ui";

type Check = NonNullable<DomainCheck["checks"]>["txt"];

/** Known DNS providers by the API's names. */
const PROVIDERS: Record<string, string> = {
  cloudflare: "Cloudflare",
  route53: "Amazon Route 53",
  google: "Google Cloud DNS",
  gabia: "Gabia",
  namecheap: "Namecheap",
  godaddy: "GoDaddy",
  azure: "Azure DNS",
  digitalocean: "DigitalOcean",
  vercel: "Vercel",
  netlify: "Netlify",
  ns1: "NS1",
  cafe24: "Cafe24",
  "hosting.kr": "hosting.kr",
  hetzner: "Hetzner",
  ovh: "OVHcloud",
};

/** One record to create at the DNS provider: its type, name and value, each with a copy button. */
function RecordBox({ type, name, value, note }: { type: string; name: string; value: string; note: string }) {
  const { t } = useI18n();
  const valueTerm = type === "CNAME" ? t("dom.target") : t("dom.value");
  return (
    <div className="record" data-record={type}>
      <div className="record-head">
        <span className="badge">{type}</span>
        <span className="muted small">{note}</span>
      </div>
      <dl className="record-fields">
        <CopyField term={t("dom.name")} value={name} copyLabel={`${type} ${t("dom.name")}`} plain />
        <CopyField term={valueTerm} value={value} copyLabel={`${type} ${valueTerm}`} plain />
      </dl>
    </div>
  );
}

/** What DNS answered for one record, in words. */
function CheckLine({ type, check }: { type: string; check: Check }) {
  const { t } = useI18n();
  const found = check.found.length ? check.found.join(", ") : null;
  const what = check.error
    ? t(`dom.err.${check.error}` as MessageKey) === `dom.err.${check.error}`
      ? check.error
      : t(`dom.err.${check.error}` as MessageKey)
    : found
      ? t("dom.found", { found })
      : t("dom.err.no_record");
  return (
    <li>
      <strong>{type}</strong> <code>{check.name}</code>: {what}
    </li>
  );
}

/** One custom domain: its state, the records that verify it, verification, the DNS provider, Cloudflare setup. */
export function DomainRow({
  slug,
  domain: d,
  onChanged,
  onDeleted,
}: {
  slug: string;
  domain: Domain;
  onChanged: (d: Domain) => void;
  onDeleted: () => void;
}) {
  const { t, locale } = useI18n();
  const params = { params: { path: { slug, id: d.id } } };
  const [result, setResult] = useState<DomainCheck | null>(null);
  // kept here, not in the setup form: the verification that follows a setup unmounts the pending block
  const [setup, setSetup] = useState<Autosetup | null>(null);
  const verify = useAction(async () => {
    const r = (await unwrap(api.POST("/v1/apps/{slug}/domains/{id}/verify", params))) as DomainCheck;
    setResult(r);
    onChanged(r.domain);
  });
  const remove = useAction(async () => {
    if (!window.confirm(t("dom.deleteConfirm", { domain: d.domain }))) return;
    await unwrap(api.DELETE("/v1/apps/{slug}/domains/{id}", params));
    onDeleted();
  });
  const pending = d.status === "pending";
  return (
    <article className="domain" data-domain={d.domain} aria-label={d.domain}>
      <header className="domain-head">
        <div className="row-main">
          <strong className="domain-name">{d.domain}</strong>
          <span className="muted small">
            {pending
              ? t("dom.addedAt", { when: when(locale, d.created_at) })
              : t("dom.verifiedAt", { when: when(locale, d.verified_at), method: (d.verified_by ?? "").toUpperCase() })}
          </span>
        </div>
        <div className="actions">
          <span className={`badge ${pending ? "state-queued" : "state-running"}`} data-state={d.status}>
            {t(`dom.${d.status}`)}
          </span>
          {!d.app_exists && <span className="badge state-failed">{t("dom.appGone")}</span>}
          <button
            type="button"
            className="btn small danger"
            disabled={remove.busy}
            aria-label={`${t("common.delete")} ${d.domain}`}
            onClick={() => void remove.run()}
          >
            {t("common.delete")}
          </button>
        </div>
      </header>
      <ErrorNote error={remove.error} />
      {!pending && (
        <p className="small">
          <a href={`https://${d.domain}/`} target="_blank" rel="noreferrer noopener">
            https://{d.domain}/
          </a>
        </p>
      )}
      {pending && (
        <>
          <p className="small">{t("dom.instructions")}</p>
          <div className="records">
            <RecordBox type="TXT" {...d.verification.txt} note={t("dom.txtNote")} />
            <RecordBox type="CNAME" {...d.verification.cname} note={t("dom.cnameNote")} />
          </div>
          <Provider
            slug={slug}
            domain={d}
            onSetUp={(out) => {
              setSetup(out);
              void verify.run();
            }}
          />
          <div className="verify-row">
            <button type="button" className="btn primary" disabled={verify.busy} onClick={() => void verify.run()}>
              {verify.busy ? <Spinner label={t("dom.verifying")} /> : t("dom.verify")}
            </button>
            {!result && d.last_check && (
              <span className="muted small">
                {t("dom.lastCheck", { when: when(locale, d.last_checked_at) })}: {d.last_check}
              </span>
            )}
          </div>
          <ErrorNote error={verify.error} />
        </>
      )}
      {setup && (
        <div className="note ok" role="status">
          <div>
            <p className="flush">{t("dom.cfDone", { zone: setup.zone.name })}</p>
            <ul className="checks">
              {setup.records.map((r) => (
                <li key={r.id}>
                  <strong>{r.type}</strong> <code>{r.name}</code>: {t(`dom.cf.${r.action}`)}
                </li>
              ))}
            </ul>
          </div>
        </div>
      )}
      {result && (
        <div data-testid="verify-result">
          {result.verified ? (
            <Notice>{t("dom.verifiedBy", { method: (result.method ?? "").toUpperCase() })}</Notice>
          ) : (
            <div className="note warn" role="status">
              <div>
                <p className="flush">
                  <strong>{t("dom.notYet")}</strong> {!result.checks && result.reason}
                </p>
                {result.checks && (
                  <ul className="checks">
                    <CheckLine type="TXT" check={result.checks.txt} />
                    <CheckLine type="CNAME" check={result.checks.cname} />
                  </ul>
                )}
              </div>
            </div>
          )}
        </div>
      )}
    </article>
  );
}

/** The DNS provider found from the NS records, and for Cloudflare the form that writes both records. */
function Provider({ slug, domain: d, onSetUp }: { slug: string; domain: Domain; onSetUp: (out: Autosetup) => void }) {
  const { t } = useI18n();
  const params = { params: { path: { slug, id: d.id } } };
  const found = useLoad(
    async () => (await unwrap(api.GET("/v1/apps/{slug}/domains/{id}/dns-provider", params))) as DnsProvider,
    [slug, d.id],
  );
  if (found.error) return <ErrorNote error={found.error} />;
  if (!found.data) return <Spinner label={t("dom.detecting")} />;
  const p = found.data;
  const name = PROVIDERS[p.provider];
  return (
    <div className="provider" data-testid="dns-provider" data-provider={p.provider}>
      <p className="small flush">
        {name ? t("dom.provider", { name }) : t("dom.providerUnknown")}
        {p.zone && <span className="muted"> · {t("dom.zone", { zone: p.zone })}</span>}
        {p.problem && <span className="muted"> · {t(`dom.err.${p.problem}` as MessageKey)}</span>}
      </p>
      {p.nameservers.length > 0 && <p className="muted small flush mono">{p.nameservers.join(" ")}</p>}
      {p.autosetup_supported && <CloudflareSetup slug={slug} domain={d} onDone={onSetUp} />}
    </div>
  );
}

/** The Cloudflare API token is sent once and dropped from the page at once; it is never kept. */
function CloudflareSetup({
  slug,
  domain: d,
  onDone,
}: {
  slug: string;
  domain: Domain;
  onDone: (out: Autosetup) => void;
}) {
  const { t } = useI18n();
  const [token, setToken] = useState("");
  const [proxied, setProxied] = useState(false);
  const [invalid, setInvalid] = useState<string | null>(null);
  const action = useAction(async (apiToken: string) => {
    const body = { api_token: apiToken, proxied };
    const params = { params: { path: { slug, id: d.id } } };
    onDone((await unwrap(api.POST("/v1/apps/{slug}/domains/{id}/cf-autosetup", { ...params, body }))) as Autosetup);
  });
  return (
    <details className="cf-setup">
      <summary>{t("dom.cf")}</summary>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const value = token.trim();
          setInvalid(value ? null : t("v.required"));
          setToken(""); // out of the page's state before the request leaves
          if (value) void action.run(value);
        }}
      >
        <p className="hint">{t("dom.cfHint")}</p>
        <TextField
          label={t("dom.cfToken")}
          error={invalid}
          type="password"
          name="cf-token"
          autoComplete="off"
          spellCheck={false}
          value={token}
          onValue={setToken}
        />
        <label className="check">
          <input type="checkbox" checked={proxied} onChange={(e) => setProxied(e.target.checked)} />
          {t("dom.cfProxied")}
        </label>
        <ErrorNote error={action.error} />
        <Submit busy={action.busy}>{t("dom.cfRun")}</Submit>
      </form>
    </details>
  );
}
