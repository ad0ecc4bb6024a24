import { useState } from "react";
import { api, session, unwrap } from "../api";
import { useI18n, money, type Locale } from "../i18n";
import type { Me } from "../me";
import { DeleteByName, TextField } from "../fields";
import { Card, ErrorNote, Field, Notice, Submit, useAction, useLoad } from "../ui";

interface Caps {
  account_spend_cap_krw: number;
  account_spend_cap_is_default: boolean;
  app_spend_cap_krw: number;
  app_spend_cap_is_default: boolean;
}

const wholeNumber = (s: string) => /^\d{1,13}$/.test(s.trim());

export function AccountPage({
  me,
  onChanged,
  onDeleted,
}: {
  me: Me;
  onChanged: (m: Me) => void;
  onDeleted: () => void;
}) {
  const { t } = useI18n();
  return (
    <>
      <h1>{t("account.title")}</h1>
      <div className="grid two">
        <Profile me={me} onChanged={onChanged} />
        <Password />
        <SpendCaps />
        <DeleteByName
          title={t("account.danger")}
          name={me.email}
          hint={t("account.dangerHint")}
          onConfirm={async () => {
            await unwrap(api.POST("/v1/me/delete"));
            await session("/console/signout").catch(() => {});
            onDeleted();
          }}
        />
      </div>
    </>
  );
}

function Profile({ me, onChanged }: { me: Me; onChanged: (m: Me) => void }) {
  const { t, setLocale } = useI18n();
  const [name, setName] = useState(me.display_name ?? "");
  const [locale, setLoc] = useState<Locale>(me.locale);
  const [done, setDone] = useState(false);
  const [invalid, setInvalid] = useState<string | null>(null);
  const action = useAction(async () => {
    const updated = (await unwrap(
      api.PATCH("/v1/me", { body: { display_name: name.trim() || null, locale } as never }),
    )) as Me;
    onChanged(updated);
    setLocale(updated.locale);
    setDone(true);
  });
  return (
    <Card title={t("account.profile")}>
      <p className="muted">{me.email}</p>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setDone(false);
          if (name.length > 100) return setInvalid(t("v.range", { min: 0, max: 100 }));
          setInvalid(null);
          void action.run();
        }}
      >
        <TextField label={t("account.displayName")} error={invalid} value={name} onValue={setName} />
        <Field label={t("account.locale")}>
          {({ id }) => (
            <select id={id} name="locale" value={locale} onChange={(e) => setLoc(e.target.value as Locale)}>
              <option value="en">English</option>
              <option value="ko">한국어</option>
            </select>
          )}
        </Field>
        <ErrorNote error={action.error} />
        {done && <Notice>{t("common.saved")}</Notice>}
        <Submit busy={action.busy}>{t("common.save")}</Submit>
      </form>
    </Card>
  );
}

function Password() {
  const { t } = useI18n();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [errors, setErrors] = useState<{ current?: string; next?: string }>({});
  const [done, setDone] = useState(false);
  const action = useAction(async () => {
    await unwrap(api.POST("/v1/me/password", { body: { current_password: current, new_password: next } }));
    setCurrent("");
    setNext("");
    setDone(true);
  });
  return (
    <Card title={t("account.password")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setDone(false);
          const errs = {
            current: current ? undefined : t("v.required"),
            next: next.length >= 8 ? undefined : t("v.password"),
          };
          setErrors(errs);
          if (!errs.current && !errs.next) void action.run();
        }}
      >
        <TextField
          label={t("account.current")}
          error={errors.current}
          type="password"
          autoComplete="current-password"
          value={current}
          onValue={setCurrent}
        />
        <TextField
          label={t("account.new")}
          error={errors.next}
          hint={t("auth.passwordHint")}
          type="password"
          autoComplete="new-password"
          value={next}
          onValue={setNext}
        />
        <ErrorNote error={action.error} />
        {done && <Notice>{t("account.passwordChanged")}</Notice>}
        <Submit busy={action.busy}>{t("common.save")}</Submit>
      </form>
    </Card>
  );
}

function SpendCaps() {
  const { t, locale } = useI18n();
  const caps = useLoad(async () => (await unwrap(api.GET("/v1/me"))) as unknown as Caps, []);
  const [accountCap, setAccountCap] = useState<string | null>(null);
  const [appCap, setAppCap] = useState<string | null>(null);
  const [errors, setErrors] = useState<{ account?: string; app?: string }>({});
  const [done, setDone] = useState(false);
  const a = accountCap ?? String(caps.data?.account_spend_cap_krw ?? "");
  const p = appCap ?? String(caps.data?.app_spend_cap_krw ?? "");
  const action = useAction(async () => {
    await unwrap(api.PUT("/v1/me/account-spend-cap", { body: { amount_krw: Number(a) } }));
    await unwrap(api.PUT("/v1/me/app-spend-cap", { body: { amount_krw: Number(p) } }));
    setAccountCap(null);
    setAppCap(null);
    caps.reload();
    setDone(true);
  });
  const note = (isDefault?: boolean, amount?: number) =>
    caps.data ? `${money(locale, amount ?? 0)}${isDefault ? ` · ${t("account.default")}` : ""}` : undefined;
  return (
    <Card title={t("account.caps")}>
      <p className="muted">{t("account.capsHint")}</p>
      <ErrorNote error={caps.error} />
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setDone(false);
          const errs = {
            account: wholeNumber(a) ? undefined : t("v.positive"),
            app: wholeNumber(p) ? undefined : t("v.positive"),
          };
          setErrors(errs);
          if (!errs.account && !errs.app) void action.run();
        }}
      >
        <TextField
          label={t("account.accountCap")}
          error={errors.account}
          hint={note(caps.data?.account_spend_cap_is_default, caps.data?.account_spend_cap_krw)}
          inputMode="numeric"
          value={a}
          onValue={setAccountCap}
        />
        <TextField
          label={t("account.appCap")}
          error={errors.app}
          hint={note(caps.data?.app_spend_cap_is_default, caps.data?.app_spend_cap_krw)}
          inputMode="numeric"
          value={p}
          onValue={setAppCap}
        />
        <ErrorNote error={action.error} />
        {done && <Notice>{t("common.saved")}</Notice>}
        <Submit busy={action.busy}>{t("common.save")}</Submit>
      </form>
    </Card>
  );
}
