import { useState, type ReactNode } from "react";
import { api, PlatformApiError, unwrap, type InvitePreview } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { useOrg } from "../org-context";
import { Link, useRouter } from "../router";
import { Card, ErrorNote, Spinner, useAction, useLoad } from "../ui";

const token = () => new URLSearchParams(window.location.search).get("token") ?? "";

/**
 * An invitation link (`/invite?token=…`, from the invitation e-mail): the public preview for anyone; signed in, the
 * invited account accepts it. A member of another organization is told so (409) and may leave it to join this one.
 */
export function InvitePage({ signedIn }: { signedIn: boolean }) {
  const { t } = useI18n();
  const tok = token();
  const preview = useLoad(
    async () => (tok ? await unwrap(api.GET("/v1/org/invites/preview", { params: { query: { token: tok } } })) : null),
    [tok],
  );
  const body = !tok ? (
    <p className="note error">{t("inv.noToken")}</p>
  ) : (
    <>
      <ErrorNote error={preview.error} />
      {!preview.data && !preview.error && <Spinner label={t("common.loading")} />}
      {preview.data && <Preview p={preview.data} />}
      {preview.data && (signedIn ? <Accept p={preview.data} /> : <SignInFirst />)}
    </>
  );
  if (signedIn)
    return (
      <>
        <h1>{t("inv.title")}</h1>
        <Card>{body}</Card>
      </>
    );
  return (
    <div className="auth-screen">
      <main className="auth-card invite-card" id="main">
        <div className="auth-brand">
          <span className="logo" aria-hidden="true">
            P
          </span>
          <span>{t("brand")}</span>
        </div>
        <h1>{t("inv.title")}</h1>
        {body}
      </main>
    </div>
  );
}

function Preview({ p }: { p: InvitePreview }) {
  const { t, locale } = useI18n();
  const row = (term: string, value: ReactNode) => (
    <>
      <dt>{term}</dt>
      <dd>{value}</dd>
    </>
  );
  return (
    <>
      <p className="invite-lead">{t("inv.lead", { inviter: p.inviter, org: p.org_name })}</p>
      <dl className="props" data-testid="invite-preview">
        {row(t("inv.org"), <strong>{p.org_name}</strong>)}
        {row(t("inv.inviter"), p.inviter)}
        {row(t("org.role"), t(`org.role.${p.role}` as MessageKey))}
        {p.department_name && row(t("org.department"), p.department_name)}
        {row(t("inv.email"), <code>{p.email}</code>)}
        {row(t("inv.expires"), when(locale, p.expires_at))}
        {row(
          t("inv.status"),
          <span className={`badge invite-${p.status}`} data-state={p.status}>
            {t(`inv.status.${p.status}` as MessageKey)}
          </span>,
        )}
      </dl>
    </>
  );
}

/** Not signed in: sign in (or create the account) first, then back here. */
function SignInFirst() {
  const { t } = useI18n();
  const next = `?next=${encodeURIComponent(window.location.pathname + window.location.search)}`;
  return (
    <div className="invite-actions">
      <p className="muted">{t("inv.signInFirst")}</p>
      <div className="actions">
        <Link to={`/signin${next}`} className="btn primary">
          {t("inv.signIn")}
        </Link>
        <Link to={`/signup${next}`} className="btn">
          {t("inv.signUp")}
        </Link>
      </div>
    </div>
  );
}

function Accept({ p }: { p: InvitePreview }) {
  const { t } = useI18n();
  const { navigate } = useRouter();
  const { org, reload } = useOrg();
  // the 409 of a member of another organization: shown, with the way to leave it and join
  const [inOther, setInOther] = useState(false);
  const accept = useAction(async (leaveCurrent: boolean) => {
    try {
      await unwrap(
        api.POST("/v1/org/invites/accept", {
          body: { token: token(), ...(leaveCurrent ? { leave_current: true } : {}) },
        }),
      );
    } catch (err) {
      setInOther(
        err instanceof PlatformApiError &&
          err.status === 409 &&
          !!org &&
          org.role !== "owner" &&
          org.name !== p.org_name &&
          !leaveCurrent,
      );
      throw err;
    }
    await reload();
    navigate("/org");
  });
  if (p.status !== "pending") return <p className="note warn">{t(`inv.closed.${p.status}` as MessageKey)}</p>;
  return (
    <div className="invite-actions">
      {org && org.name !== p.org_name && <p className="note warn">{t("inv.member", { current: org.name })}</p>}
      <ErrorNote error={accept.error} />
      {inOther && org ? (
        <div className="actions">
          <button type="button" className="btn danger" disabled={accept.busy} onClick={() => void accept.run(true)}>
            {t("inv.leaveAndJoin", { current: org.name, org: p.org_name })}
          </button>
          <Link to="/org" className="btn ghost">
            {t("common.cancel")}
          </Link>
        </div>
      ) : (
        <button type="button" className="btn primary" disabled={accept.busy} onClick={() => void accept.run(false)}>
          {accept.busy ? <Spinner label={t("common.working")} /> : t("inv.accept", { org: p.org_name })}
        </button>
      )}
    </div>
  );
}
