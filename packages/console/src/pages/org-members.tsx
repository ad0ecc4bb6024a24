import { useState } from "react";
import { api, unwrap, type InviteOutcome, type Org, type OrgMember } from "../api";
import type { Me } from "../me";
import { useI18n, when, type MessageKey } from "../i18n";
import { Loaded, ResourceTable, RowButton, srOnly } from "../lists";
import { Card, CopyButton, ErrorNote, Field, Submit, useAction, useLoad } from "../ui";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MAX_INVITES = 50;
type InviteRole = "admin" | "member";

/**
 * The members with role and department. The owner changes roles (admins are the owner's to change); admins remove
 * members, the owner anyone but itself. The server decides in the end; its refusals are shown in words.
 */
export function Members({ org, me, onChanged }: { org: Org; me: Me; onChanged: () => Promise<void> }) {
  const { t, locale } = useI18n();
  const list = useLoad(async () => (await unwrap(api.GET("/v1/org/members"))).items, [org.member_count]);
  const owner = org.role === "owner";
  const admin = owner || org.role === "admin";
  const path = (m: OrgMember) => ({ params: { path: { id: m.id } } });
  const setRole = useAction(async (m: OrgMember, role: InviteRole) => {
    await unwrap(api.PATCH("/v1/org/members/{id}", { ...path(m), body: { role } }));
    list.reload();
  });
  const remove = useAction(async (m: OrgMember) => {
    if (!window.confirm(t("org.removeConfirm", { who: m.email }))) return;
    await unwrap(api.DELETE("/v1/org/members/{id}", path(m)));
    await onChanged();
    list.reload();
  });
  const removable = (m: OrgMember) => m.id !== me.id && m.role !== "owner" && (owner || (admin && m.role === "member"));
  const roleName = (role: string) => t(`org.role.${role}` as MessageKey);
  return (
    <Card title={t("org.members")}>
      <Loaded list={list} error={list.error || setRole.error || remove.error} empty={t("org.noMembers")}>
        {(rows) => (
          <ResourceTable
            rows={rows}
            testId="org-members"
            rowData={(m) => ({ "data-email": m.email, "data-role": m.role })}
            columns={[
              {
                head: t("org.member"),
                cell: (m) => (
                  <div className="row-main">
                    <span>
                      {m.display_name || m.email}
                      {m.id === me.id && <span className="chip">{t("org.you")}</span>}
                    </span>
                    {m.display_name && <span className="muted small">{m.email}</span>}
                  </div>
                ),
              },
              {
                head: t("org.role"),
                cell: (m) =>
                  owner && m.role !== "owner" ? (
                    <select
                      aria-label={`${t("org.role")} ${m.email}`}
                      value={m.role}
                      disabled={setRole.busy}
                      onChange={(e) => void setRole.run(m, e.target.value as InviteRole)}
                    >
                      <option value="member">{roleName("member")}</option>
                      <option value="admin">{roleName("admin")}</option>
                    </select>
                  ) : (
                    <span className={`badge role-${m.role}`}>{roleName(m.role)}</span>
                  ),
              },
              {
                head: t("org.department"),
                cell: (m) =>
                  m.department_name ? (
                    <>
                      {m.department_name} {m.department_code && <span className="chip">{m.department_code}</span>}
                    </>
                  ) : (
                    <span className="muted">{t("org.noDepartment")}</span>
                  ),
              },
              { head: t("org.joined"), className: "hide-sm", cell: (m) => when(locale, m.joined_at) },
              admin && {
                head: srOnly(t("org.remove")),
                className: "right",
                cell: (m) =>
                  removable(m) && (
                    <RowButton
                      label={t("org.remove")}
                      target={m.email}
                      kind="danger"
                      busy={remove.busy}
                      onClick={() => void remove.run(m)}
                    />
                  ),
              },
            ]}
          />
        )}
      </Loaded>
    </Card>
  );
}

/** Addresses separated by lines, commas or spaces. */
const addresses = (text: string) =>
  text
    .split(/[\s,;]+/)
    .map((a) => a.trim())
    .filter(Boolean);

/** Invite up to 50 addresses with one role; each address's result, and its link when the platform sends no mail. */
export function InviteForm({ org, onInvited }: { org: Org; onInvited: () => void }) {
  const { t } = useI18n();
  const [text, setText] = useState("");
  const [role, setRole] = useState<InviteRole>("member");
  const [invalid, setInvalid] = useState<string | null>(null);
  const [results, setResults] = useState<InviteOutcome[] | null>(null);
  const action = useAction(async () => {
    const invites = addresses(text).map((email) => ({ email, role }));
    const res = await unwrap(api.POST("/v1/org/invites", { body: { invites } }));
    setResults(res.items);
    setText("");
    onInvited();
  });
  const check = (): string | null => {
    const list = addresses(text);
    if (!list.length) return t("v.required");
    const bad = list.find((a) => !EMAIL.test(a));
    if (bad) return t("org.badEmail", { email: bad });
    if (list.length > MAX_INVITES) return t("org.tooMany", { n: MAX_INVITES });
    return null;
  };
  return (
    <Card title={t("org.invite")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const bad = check();
          setInvalid(bad);
          if (!bad) void action.run();
        }}
      >
        <Field label={t("org.inviteEmails")} hint={t("org.inviteHint")} error={invalid}>
          {({ id, describedBy, invalid }) => (
            <textarea
              id={id}
              rows={3}
              spellCheck={false}
              autoComplete="off"
              placeholder="ada@example.com, bob@example.com"
              aria-describedby={describedBy}
              aria-invalid={invalid}
              value={text}
              onChange={(e) => setText(e.target.value)}
            />
          )}
        </Field>
        <Field label={t("org.inviteRole")} hint={org.role === "owner" ? undefined : t("org.adminsByOwner")}>
          {({ id, describedBy }) => (
            <select
              id={id}
              aria-describedby={describedBy}
              value={role}
              onChange={(e) => setRole(e.target.value as InviteRole)}
            >
              <option value="member">{t("org.role.member")}</option>
              {org.role === "owner" && <option value="admin">{t("org.role.admin")}</option>}
            </select>
          )}
        </Field>
        <ErrorNote error={action.error} />
        <Submit busy={action.busy}>{t("org.send")}</Submit>
      </form>
      {results && <InviteResults results={results} />}
    </Card>
  );
}

function InviteResults({ results }: { results: InviteOutcome[] }) {
  const { t } = useI18n();
  const anyLink = results.some((r) => r.link);
  return (
    <div className="invite-results" data-testid="invite-results" aria-live="polite">
      {anyLink && <p className="note warn">{t("org.linksNoMail")}</p>}
      <ul className="rows">
        {results.map((r, i) => (
          <li key={`${r.email}-${i}`} data-email={r.email} data-result={r.result}>
            <div className="row-main">
              <span>
                <strong>{r.email}</strong>{" "}
                <span className={`badge result-${r.result}`}>{t(`org.result.${r.result}` as MessageKey)}</span>
              </span>
              {r.reason && <span className="muted small">{r.reason}</span>}
              {r.link && (
                <span className="copy-line">
                  <code className="invite-link" data-testid="invite-link">
                    {r.link}
                  </code>
                  <CopyButton text={r.link} label={`${t("org.link")} ${r.email}`} />
                </span>
              )}
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Pending invitations (expired ones marked), each withdrawn with a click: its link stops working. */
export function PendingInvites() {
  const { t, locale } = useI18n();
  const list = useLoad(async () => (await unwrap(api.GET("/v1/org/invites"))).items, []);
  const withdraw = useAction(async (id: string) => {
    await unwrap(api.DELETE("/v1/org/invites/{id}", { params: { path: { id } } }));
    list.reload();
  });
  return (
    <Card title={t("org.pending")}>
      <Loaded list={list} error={list.error || withdraw.error} empty={t("org.noPending")}>
        {(rows) => (
          <ResourceTable
            rows={rows}
            testId="org-invites"
            rowData={(i) => ({ "data-email": i.email })}
            columns={[
              {
                head: t("inv.email"),
                cell: (i) => (
                  <div className="row-main">
                    <span>{i.email}</span>
                    <span className="muted small">
                      {t(`org.role.${i.role}` as MessageKey)} · {i.invited_by.display_name || i.invited_by.email}
                    </span>
                  </div>
                ),
              },
              {
                head: t("inv.expires"),
                cell: (i) =>
                  i.expired ? (
                    <span className="badge state-failed">{t("inv.status.expired")}</span>
                  ) : (
                    when(locale, i.expires_at)
                  ),
              },
              {
                head: srOnly(t("org.withdraw")),
                className: "right",
                cell: (i) => (
                  <RowButton
                    label={t("org.withdraw")}
                    target={i.email}
                    busy={withdraw.busy}
                    onClick={() => void withdraw.run(i.id)}
                  />
                ),
              },
            ]}
          />
        )}
      </Loaded>
    </Card>
  );
}
