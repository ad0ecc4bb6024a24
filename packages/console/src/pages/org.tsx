import { useState } from "react";
import { api, unwrap, type Org } from "../api";
import type { Me } from "../me";
import { useI18n, when, type MessageKey } from "../i18n";
import { useOrg } from "../org-context";
import { DeleteByName, TextField } from "../fields";
import { PageHead } from "../lists";
import { Card, ErrorNote, Field, Notice, Spinner, Submit, useAction } from "../ui";
import { InviteForm, Members, PendingInvites } from "./org-members";

export const VISIBILITIES = ["private", "invited", "department", "company", "public"] as const;
type Visibility = (typeof VISIBILITIES)[number];

/**
 * The caller's organization: who is in it, invitations and settings for admins, leaving for members, deletion for
 * the owner. Not in one: the form that creates one.
 */
export function OrgPage({ me }: { me: Me }) {
  const { t, locale } = useI18n();
  const { org, error, reload } = useOrg();
  const [invited, setInvited] = useState(0);
  if (org === null) return <CreateOrg onCreated={reload} />;
  if (!org)
    return (
      <>
        <h1>{t("org.title")}</h1>
        <ErrorNote error={error} />
        {!error && <Spinner label={t("common.loading")} />}
      </>
    );
  const admin = org.role === "owner" || org.role === "admin";
  return (
    <>
      <PageHead
        title={org.name}
        intro={t("org.summary", {
          role: t(`org.role.${org.role}` as MessageKey),
          n: org.member_count,
          since: when(locale, org.created_at),
        })}
      />
      <Members org={org} me={me} onChanged={reload} />
      {admin && (
        <div className="grid two">
          <InviteForm org={org} onInvited={() => setInvited((n) => n + 1)} />
          <PendingInvites key={invited} />
        </div>
      )}
      <div className="grid two">
        {admin && <Settings org={org} onSaved={reload} />}
        {org.role === "owner" ? <DeleteOrg org={org} onDeleted={reload} /> : <LeaveOrg org={org} onLeft={reload} />}
      </div>
    </>
  );
}

function CreateOrg({ onCreated }: { onCreated: () => Promise<void> }) {
  const { t } = useI18n();
  const [name, setName] = useState("");
  const [invalid, setInvalid] = useState<string | undefined>();
  const action = useAction(async () => {
    await unwrap(api.POST("/v1/org", { body: { name: name.trim() } }));
    await onCreated();
  });
  return (
    <>
      <PageHead title={t("org.title")} intro={t("org.none")} />
      <Card title={t("org.create")}>
        <form
          className="narrow"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            const bad = !name.trim() ? t("v.required") : name.trim().length > 100 ? t("org.nameLong") : undefined;
            setInvalid(bad);
            if (!bad) void action.run();
          }}
        >
          <TextField
            label={t("org.name")}
            name="org-name"
            autoComplete="organization"
            hint={t("org.createHint")}
            value={name}
            error={invalid}
            onValue={setName}
          />
          <ErrorNote error={action.error} />
          <Submit busy={action.busy}>{t("org.create")}</Submit>
        </form>
      </Card>
    </>
  );
}

function VisibilitySelect(props: { label: string; hint?: string; value: Visibility; set: (v: Visibility) => void }) {
  const { t } = useI18n();
  return (
    <Field label={props.label} hint={props.hint}>
      {({ id, describedBy }) => (
        <select
          id={id}
          aria-describedby={describedBy}
          value={props.value}
          onChange={(e) => props.set(e.target.value as Visibility)}
        >
          {VISIBILITIES.map((v) => (
            <option key={v} value={v}>
              {t(`org.vis.${v}` as MessageKey)}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

function Settings({ org, onSaved }: { org: Org; onSaved: () => Promise<void> }) {
  const { t } = useI18n();
  const [name, setName] = useState(org.name);
  const [def, setDef] = useState<Visibility>(org.default_visibility);
  const [max, setMax] = useState<Visibility>(org.max_visibility);
  const [shared, setShared] = useState(org.shared_approval);
  const [invalid, setInvalid] = useState<string | undefined>();
  const [done, setDone] = useState(false);
  const action = useAction(async () => {
    const body = { name: name.trim(), default_visibility: def, max_visibility: max, shared_approval: shared };
    await unwrap(api.PATCH("/v1/org", { body }));
    setDone(true);
    await onSaved();
  });
  return (
    <Card title={t("org.settings")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setDone(false);
          const bad = !name.trim() ? t("v.required") : name.trim().length > 100 ? t("org.nameLong") : undefined;
          setInvalid(bad);
          if (!bad) void action.run();
        }}
      >
        <TextField label={t("org.name")} name="org-name" value={name} error={invalid} onValue={setName} />
        <div className="field-pair">
          <VisibilitySelect label={t("org.defaultVis")} value={def} set={setDef} />
          <VisibilitySelect label={t("org.maxVis")} value={max} set={setMax} />
        </div>
        <p className="hint">{t("org.visHint")}</p>
        <label className="check">
          <input type="checkbox" checked={shared} onChange={(e) => setShared(e.target.checked)} />
          {t("org.sharedApproval")}
        </label>
        <p className="hint">{t("org.sharedApprovalHint")}</p>
        <ErrorNote error={action.error} />
        {done && <Notice>{t("common.saved")}</Notice>}
        <Submit busy={action.busy}>{t("common.save")}</Submit>
      </form>
    </Card>
  );
}

function LeaveOrg({ org, onLeft }: { org: Org; onLeft: () => Promise<void> }) {
  const { t } = useI18n();
  const [left, setLeft] = useState<number | null>(null);
  const action = useAction(async () => {
    if (!window.confirm(t("org.leaveConfirm", { name: org.name }))) return;
    const res = await unwrap(api.POST("/v1/org/leave"));
    setLeft(res.assets_handed_over);
    await onLeft();
  });
  return (
    <Card title={t("org.leave")}>
      <p className="muted">{t("org.leaveHint")}</p>
      {left !== null && <Notice>{t("org.leftDone", { n: left })}</Notice>}
      <ErrorNote error={action.error} />
      <button type="button" className="btn danger" disabled={action.busy} onClick={() => void action.run()}>
        {t("org.leave")}
      </button>
    </Card>
  );
}

function DeleteOrg({ org, onDeleted }: { org: Org; onDeleted: () => Promise<void> }) {
  const { t } = useI18n();
  return (
    <DeleteByName
      title={t("org.delete")}
      name={org.name}
      hint={t("org.deleteHint", { name: org.name })}
      onConfirm={async () => {
        await unwrap(api.DELETE("/v1/org", { body: { confirm: org.name } }));
        await onDeleted();
      }}
    />
  );
}
