import { useState } from "react";
import { api, unwrap, type Partner, type PartnerChild } from "../api";
import { money, useI18n, when, type MessageKey } from "../i18n";
import { TextField } from "../fields";
import { DeleteButton, PageHead, ResourceTable, srOnly } from "../lists";
import { Card, ErrorNote, Notice, Spinner, Submit, useAction, useLoad } from "../ui";
import { PartnerInvoices, PartnerUsage } from "./partner-billing";

/** An opaque ref as the API takes it: no e-mail address, no whitespace (src/partner/schemas.ts assertOpaque). */
const opaque = (v: string) => !v.includes("@") && !/\s/.test(v);

/** visitor_login_url: https, or http on a loopback host (src/partner/schemas.ts assertVisitorUrl). */
function visitorUrlOk(raw: string): boolean {
  try {
    const url = new URL(raw);
    const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
    return url.protocol === "https:" || (url.protocol === "http:" && loopback);
  } catch {
    return false;
  }
}

/** /partner: shown in the navigation only to partner accounts (GET /v1/partner answers 200; app.tsx). */
export function PartnerPage() {
  const { t } = useI18n();
  const profile = useLoad(() => unwrap(api.GET("/v1/partner")), []);
  return (
    <>
      <PageHead title={t("partner.title")} intro={t("partner.intro")} />
      <ErrorNote error={profile.error} />
      {!profile.data && !profile.error && <Spinner label={t("common.loading")} />}
      {profile.data && <Profile partner={profile.data} onSaved={(p) => profile.setData(p)} />}
      <Children onChanged={profile.reload} />
      <PartnerUsage />
      <PartnerInvoices />
    </>
  );
}

function Profile({ partner, onSaved }: { partner: Partner; onSaved: (p: Partner) => void }) {
  const { t, locale } = useI18n();
  const [url, setUrl] = useState(partner.visitor_login_url ?? "");
  const [invalid, setInvalid] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    const next = url.trim();
    onSaved(await unwrap(api.PATCH("/v1/partner", { body: { visitor_login_url: next || null } })));
    setSaved(true);
  });
  return (
    <div className="grid two">
      <Card title={t("partner.profile")}>
        <dl className="props" data-testid="partner-profile">
          <dt>{t("partner.billingMode")}</dt>
          <dd data-mode={partner.billing_mode}>{t(`partner.mode.${partner.billing_mode}` as MessageKey)}</dd>
          <dt>{t("partner.limit")}</dt>
          <dd>
            {partner.monthly_limit_krw === null ? t("partner.noLimit") : money(locale, partner.monthly_limit_krw)}
          </dd>
          <dt>{t("partner.monthUsage")}</dt>
          <dd className="num">{money(locale, partner.month_usage_krw)}</dd>
          <dt>{t("partner.childCount")}</dt>
          <dd className="num" data-testid="partner-child-count">
            {partner.child_count}
          </dd>
          <dt>{t("partner.loginUrl")}</dt>
          <dd>{partner.visitor_login_url ? <code>{partner.visitor_login_url}</code> : "—"}</dd>
        </dl>
      </Card>
      <Card title={t("partner.loginUrl")}>
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            setSaved(false);
            const bad = url.trim() !== "" && !visitorUrlOk(url.trim());
            setInvalid(bad ? t("partner.badUrl") : null);
            if (!bad) void save.run();
          }}
        >
          <TextField
            label={t("partner.loginUrl")}
            name="visitor-login-url"
            type="url"
            autoComplete="off"
            value={url}
            onValue={setUrl}
            error={invalid}
            hint={t("partner.loginUrlHint")}
          />
          <ErrorNote error={save.error} />
          {saved && <Notice>{t("common.saved")}</Notice>}
          <Submit busy={save.busy}>{t("common.save")}</Submit>
        </form>
      </Card>
    </div>
  );
}

/** The children, oldest first, a page of 50 at a time (GET /v1/partner/users with next_cursor). */
function Children({ onChanged }: { onChanged: () => void }) {
  const { t, locale } = useI18n();
  // a new list (after a create or delete) starts again from the first page
  const [generation, setGeneration] = useState(0);
  const [cursors, setCursors] = useState<string[]>([""]);
  const [items, setItems] = useState<PartnerChild[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(async () => {
    const res = await unwrap(
      api.GET("/v1/partner/users", { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } }),
    );
    setItems((prev) => (cursor ? [...prev, ...res.items] : res.items));
    setNext(res.next_cursor);
    return res;
  }, [cursor, generation]);
  const changed = () => {
    setCursors([""]);
    setGeneration((g) => g + 1);
    onChanged();
  };
  const remove = useAction(async (child: PartnerChild) => {
    if (!window.confirm(t("partner.deleteConfirm", { ref: child.external_ref }))) return;
    await unwrap(api.DELETE("/v1/partner/users/{id}", { params: { path: { id: child.id } } }));
    changed();
  });
  return (
    <div className="grid two">
      <Card title={t("partner.children")}>
        <ErrorNote error={page.error || remove.error} />
        {!page.data && !page.error && <Spinner label={t("common.loading")} />}
        {page.data && items.length === 0 && <p className="empty">{t("partner.noChildren")}</p>}
        {items.length > 0 && (
          <ResourceTable
            rows={items}
            testId="partner-children"
            rowData={(c) => ({ "data-ref": c.external_ref })}
            columns={[
              { head: t("partner.externalRef"), cell: (c) => <code>{c.external_ref}</code> },
              { head: t("partner.department"), cell: (c) => c.department_code ?? "—" },
              { head: t("partner.tenant"), cell: (c) => c.tenant_ref ?? "—" },
              {
                head: t("partner.cap"),
                className: "right num",
                cell: (c) => (c.monthly_cap_krw === null ? "—" : money(locale, c.monthly_cap_krw)),
              },
              { head: t("partner.created_at"), cell: (c) => when(locale, c.created_at) },
              {
                head: srOnly(t("db.actions")),
                cellClass: "right",
                cell: (c) => (
                  <DeleteButton target={c.external_ref} busy={remove.busy} onClick={() => void remove.run(c)} />
                ),
              },
            ]}
          />
        )}
        {next && (
          <button type="button" className="btn" onClick={() => setCursors((c) => [...c, next])}>
            {t("common.more")}
          </button>
        )}
      </Card>
      <NewChild onCreated={changed} />
    </div>
  );
}

function NewChild({ onCreated }: { onCreated: () => void }) {
  const { t } = useI18n();
  const [ref, setRef] = useState("");
  const [department, setDepartment] = useState("");
  const [tenant, setTenant] = useState("");
  const [cap, setCap] = useState("");
  const [errors, setErrors] = useState<{ ref?: string; department?: string; tenant?: string; cap?: string }>({});
  const [done, setDone] = useState<string | null>(null);
  const create = useAction(async () => {
    const res = await api.POST("/v1/partner/users", {
      body: {
        external_ref: ref.trim(),
        department_code: department.trim() || null,
        tenant_ref: tenant.trim() || null,
        monthly_cap_krw: cap.trim() ? Number(cap) : null,
      },
    });
    const child = await unwrap(Promise.resolve(res));
    // 200: the external_ref already had a child (the API is idempotent on it)
    setDone(t(res.response.status === 201 ? "partner.created" : "partner.existed", { ref: child.external_ref }));
    setRef("");
    setDepartment("");
    setTenant("");
    setCap("");
    onCreated();
  });
  const validate = () => {
    const r = ref.trim();
    const errs = {
      ref: !r ? t("v.required") : r.length > 200 || !opaque(r) ? t("partner.opaque") : undefined,
      department: department.trim().length > 100 ? t("v.range", { min: 1, max: 100 }) : undefined,
      tenant: tenant.trim() && !opaque(tenant.trim()) ? t("partner.opaque") : undefined,
      cap:
        cap.trim() && !(/^\d+$/.test(cap.trim()) && Number(cap) >= 1 && Number(cap) <= 1_000_000_000_000)
          ? t("v.positive")
          : undefined,
    };
    setErrors(errs);
    return !errs.ref && !errs.department && !errs.tenant && !errs.cap;
  };
  return (
    <Card title={t("partner.newChild")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setDone(null);
          if (validate()) void create.run();
        }}
      >
        <TextField
          label={t("partner.externalRef")}
          name="external-ref"
          autoComplete="off"
          value={ref}
          onValue={setRef}
          error={errors.ref}
          hint={t("partner.externalRefHint")}
        />
        <TextField
          label={t("partner.department")}
          name="department-code"
          autoComplete="off"
          value={department}
          onValue={setDepartment}
          error={errors.department}
          hint={t("partner.optional")}
        />
        <TextField
          label={t("partner.tenant")}
          name="tenant-ref"
          autoComplete="off"
          value={tenant}
          onValue={setTenant}
          error={errors.tenant}
          hint={t("partner.optional")}
        />
        <TextField
          label={t("partner.cap")}
          name="monthly-cap"
          inputMode="numeric"
          value={cap}
          onValue={setCap}
          error={errors.cap}
          hint={t("partner.optional")}
        />
        <ErrorNote error={create.error} />
        {done && <Notice>{done}</Notice>}
        <Submit busy={create.busy}>{t("partner.create")}</Submit>
      </form>
    </Card>
  );
}
