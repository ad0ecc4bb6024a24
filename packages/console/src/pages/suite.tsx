import { useEffect, useRef, useState } from "react";
import { client } from "../api";
import { useI18n, type MessageKey } from "../i18n";
import { Link, useRouter } from "../router";
import { Card, ErrorNote, Notice, Spinner, Submit, useAction, useLoad } from "../ui";

/** The organization's suite link as GET /v1/org/suite answers it (not in the generated SDK's paths yet). */
interface SuiteLink {
  company_id: string;
  setup_done: boolean;
  join_policy: "all" | "departments" | "invite";
  join_units: string[];
  stop_on_exhausted: boolean;
  billing_mode: string;
}

interface SuiteSession {
  account: { id: string; email: string };
  org_id: string;
  setup_pending: boolean;
  role: string | null;
}

const NOTICES = ["suite_setup_pending", "suite_join_department", "suite_join_invite", "suite_not_linked"];

/**
 * On the sign-in page: the notice a held or refused suite sign-in came back with (`?notice=`), and the "Sign in with
 * the suite" button when GET /v1/auth/suite says the platform offers it. The button is a plain link: the browser
 * goes to the suite and comes back to /suite with a one-time code.
 */
export function SuiteSignIn() {
  const { t } = useI18n();
  const [enabled, setEnabled] = useState(false);
  useEffect(() => {
    let alive = true;
    client
      .request("GET", "/v1/auth/suite")
      .then((r) => alive && setEnabled(!!(r as { enabled?: boolean }).enabled))
      .catch(() => {});
    return () => {
      alive = false;
    };
  }, []);
  const notice = new URLSearchParams(window.location.search).get("notice");
  const noticeKey = (
    notice && NOTICES.includes(notice) ? `suite.notice.${notice}` : "suite.notice.unknown"
  ) as MessageKey;
  return (
    <>
      {notice && (
        <div className="note error" role="alert" data-testid="suite-notice">
          <span>{t(noticeKey)}</span>
          <span className="code">
            {t("common.errorCode")}: <code>{notice}</code>
          </span>
        </div>
      )}
      {enabled && (
        <div className="suite-signin">
          <p className="muted">{t("suite.or")}</p>
          <a className="btn secondary" href={`/v1/auth/suite/start?return_to=${encodeURIComponent("/suite")}`}>
            {t("suite.button")}
          </a>
        </div>
      )}
    </>
  );
}

/**
 * Where the suite sign-in lands (`/suite?suite_code=…`): the one-time code becomes the console's cookie session
 * (POST /console/suite-session), the console switches to the organization's context (a suite account works only
 * there), and an admin whose setup is pending goes to the wizard.
 */
export function SuiteLanding({ onSignedIn }: { onSignedIn: (s: SuiteSession) => Promise<void> }) {
  const { t } = useI18n();
  const { navigate } = useRouter();
  const [error, setError] = useState<unknown>(null);
  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const code = new URLSearchParams(window.location.search).get("suite_code") ?? "";
    client
      .request("POST", "/console/suite-session", { body: { code } })
      .then(async (s) => {
        const session = s as SuiteSession;
        await onSignedIn(session);
        const admin = session.role === "owner" || session.role === "admin";
        navigate(session.setup_pending && admin ? "/org/suite" : "/databases");
      })
      .catch(setError);
  }, [navigate, onSignedIn]);
  return (
    <div className="auth-screen">
      <main className="auth-card" id="main">
        {error ? (
          <>
            <h1>{t("suite.landingFailed")}</h1>
            <ErrorNote error={error} />
            <p className="switch">
              <Link to="/signin">{t("suite.backToSignin")}</Link>
            </p>
          </>
        ) : (
          <Spinner label={t("suite.landing")} />
        )}
      </main>
    </div>
  );
}

/** The setup wizard for admins (`/org/suite`): join policy, departments, billing options, finish. */
export function SuiteWizardPage() {
  const { t } = useI18n();
  const link = useLoad(async () => (await client.request("GET", "/v1/org/suite")) as SuiteLink, []);
  if (link.error) return <ErrorNote error={link.error} />;
  if (!link.data) return <Spinner label={t("common.loading")} />;
  return <Wizard link={link.data} reload={link.reload} />;
}

function Wizard({ link, reload }: { link: SuiteLink; reload: () => Promise<unknown> | void }) {
  const { t } = useI18n();
  const [policy, setPolicy] = useState(link.join_policy);
  const [units, setUnits] = useState(link.join_units.join(", "));
  const [unitsError, setUnitsError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [stop, setStop] = useState(link.stop_on_exhausted);

  const unitList = () =>
    units
      .split(",")
      .map((u) => u.trim())
      .filter(Boolean);
  const savePolicy = async () => {
    await client.request("PUT", "/v1/org/suite/join-policy", {
      body: policy === "departments" ? { policy, departments: unitList() } : { policy },
    });
  };
  const policyAction = useAction(async () => {
    await savePolicy();
    setSaved("policy");
  });
  const sync = useAction(async () => {
    await client.request("POST", "/v1/org/suite/sync-departments");
    setSaved("sync");
  });
  const billing = useAction(async () => {
    await client.request("PUT", "/v1/org/suite/billing", { body: { stop_on_exhausted: stop } });
    setSaved("billing");
  });
  const finish = useAction(async () => {
    await savePolicy();
    await client.request("POST", "/v1/org/suite/setup/finish");
    await reload();
  });
  const checkUnits = () => {
    const bad = policy === "departments" && unitList().length === 0 ? t("suite.unitsRequired") : null;
    setUnitsError(bad);
    return !bad;
  };

  return (
    <>
      <h1>{t("suite.wizard")}</h1>
      <p className="muted">{t("suite.wizardIntro", { company: link.company_id })}</p>
      {link.setup_done && <Notice>{t("suite.done")}</Notice>}
      <Card title={t("suite.step.policy")}>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (checkUnits()) void policyAction.run();
          }}
        >
          <fieldset className="scope-grid">
            {(["all", "departments", "invite"] as const).map((p) => (
              <label className="check" key={p}>
                <input type="radio" name="policy" checked={policy === p} onChange={() => setPolicy(p)} />
                {t(`suite.policy.${p}` as MessageKey)}
              </label>
            ))}
          </fieldset>
          {policy === "departments" && (
            <div className="field">
              <label htmlFor="suite-units">{t("suite.units")}</label>
              <input id="suite-units" value={units} onChange={(e) => setUnits(e.target.value)} />
              <p className={unitsError ? "field-error" : "hint"}>{unitsError ?? t("suite.unitsHint")}</p>
            </div>
          )}
          <ErrorNote error={policyAction.error} />
          {saved === "policy" && <Notice>{t("common.saved")}</Notice>}
          <Submit busy={policyAction.busy}>{t("common.save")}</Submit>
        </form>
      </Card>
      <Card title={t("suite.step.departments")}>
        <p className="hint">{t("suite.departmentsHint")}</p>
        <ErrorNote error={sync.error} />
        {saved === "sync" && <Notice>{t("suite.synced")}</Notice>}
        <button type="button" className="btn secondary" disabled={sync.busy} onClick={() => void sync.run()}>
          {t("suite.sync")}
        </button>
      </Card>
      <Card title={t("suite.step.billing")}>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void billing.run();
          }}
        >
          <p className="hint">{t("suite.billingHint")}</p>
          <label className="check">
            <input type="checkbox" checked={stop} onChange={(e) => setStop(e.target.checked)} />
            {t("suite.stopOnExhausted")}
          </label>
          <ErrorNote error={billing.error} />
          {saved === "billing" && <Notice>{t("common.saved")}</Notice>}
          <Submit busy={billing.busy} kind="secondary">
            {t("common.save")}
          </Submit>
        </form>
      </Card>
      {!link.setup_done && (
        <Card title={t("suite.step.finish")}>
          <p className="hint">{t("suite.finishHint")}</p>
          <ErrorNote error={finish.error} />
          <button
            type="button"
            className="btn primary"
            disabled={finish.busy}
            onClick={() => {
              if (checkUnits()) void finish.run();
            }}
          >
            {t("suite.finish")}
          </button>
        </Card>
      )}
    </>
  );
}
