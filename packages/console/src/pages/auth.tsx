import { useState } from "react";
import { session } from "../api";
import { useI18n } from "../i18n";
import { Link } from "../router";
import { TextField } from "../fields";
import { ErrorNote, Submit, useAction } from "../ui";
import { SuiteSignIn } from "./suite";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Sign in and sign up: the server answers with the HttpOnly session cookie, never a token this page sees. */
export function AuthPage({ mode, onSignedIn }: { mode: "signin" | "signup"; onSignedIn: () => Promise<void> }) {
  const { t, locale, setLocale } = useI18n();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [errors, setErrors] = useState<{ email?: string; password?: string }>({});
  const action = useAction(async () => {
    await session(mode === "signup" ? "/console/signup" : "/console/session", { email: email.trim(), password });
    await onSignedIn();
  });
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const next: typeof errors = {};
    if (!email.trim()) next.email = t("v.required");
    else if (!EMAIL.test(email.trim())) next.email = t("v.email");
    if (!password) next.password = t("v.required");
    else if (mode === "signup" && password.length < 8) next.password = t("v.password");
    setErrors(next);
    if (!next.email && !next.password) void action.run();
  };
  const title = mode === "signup" ? t("auth.signup") : t("auth.signin");
  // where to go once signed in (an invitation link, say) goes along to the other form
  const search = window.location.search;
  return (
    <div className="auth-screen">
      <main className="auth-card" id="main">
        <div className="auth-brand">
          <span className="logo" aria-hidden="true">
            P
          </span>
          <span>{t("brand")}</span>
        </div>
        <h1>{title}</h1>
        <p className="muted">{t("auth.welcome")}</p>
        <form onSubmit={submit} noValidate>
          <TextField
            label={t("auth.email")}
            error={errors.email}
            name="email"
            type="email"
            autoComplete="email"
            value={email}
            onValue={setEmail}
          />
          <TextField
            label={t("auth.password")}
            error={errors.password}
            hint={mode === "signup" ? t("auth.passwordHint") : undefined}
            name="password"
            type="password"
            autoComplete={mode === "signup" ? "new-password" : "current-password"}
            value={password}
            onValue={setPassword}
          />
          <ErrorNote error={action.error} />
          <Submit busy={action.busy}>{title}</Submit>
        </form>
        {mode === "signin" && <SuiteSignIn />}
        <p className="switch">
          {mode === "signup" ? (
            <Link to={`/signin${search}`}>{t("auth.toSignin")}</Link>
          ) : (
            <Link to={`/signup${search}`}>{t("auth.toSignup")}</Link>
          )}
        </p>
        <div className="lang-switch" role="group" aria-label="Language">
          <button
            type="button"
            className="btn ghost small"
            aria-pressed={locale === "en"}
            onClick={() => setLocale("en")}
          >
            English
          </button>
          <button
            type="button"
            className="btn ghost small"
            aria-pressed={locale === "ko"}
            onClick={() => setLocale("ko")}
          >
            한국어
          </button>
        </div>
      </main>
    </div>
  );
}
