import { useState } from "react";
import { api, unwrap, type Domain } from "../api";
import { useI18n, type Translate } from "../i18n";
import { TextField } from "../fields";
import { Card, ErrorNote, Spinner, Submit, useAction, useEventStream, useLoad } from "../ui";
import { DomainRow } from "./domain-row";

/** the events that change a domain's row (the live event stream, ui.tsx useEventStream) */
const DOMAIN_EVENTS = ["domain.verified", "domain.certificate_failed"];

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A host name as the API will store it (lower case, no trailing dot, internationalized names in their xn-- form,
 * which the browser's URL parser computes), or a message why it cannot be a custom domain.
 */
export function checkDomain(input: string, t: Translate): { domain: string } | { error: string } {
  const raw = input.trim().toLowerCase().replace(/\.$/, "");
  if (!raw) return { error: t("v.required") };
  let ascii: string;
  try {
    ascii = new URL(`http://${raw}/`).hostname;
  } catch {
    return { error: t("v.domain") };
  }
  // the URL parser also takes what is no host name here: a port, a path, an IP address, escapes
  const labels = ascii.split(".");
  const ok =
    !/[/:?#@%\\\s]/.test(raw) &&
    labels.length >= 2 &&
    ascii.length <= 253 &&
    labels.every((l) => LABEL.test(l)) &&
    /[a-z]/.test(labels[labels.length - 1]);
  return ok ? { domain: raw } : { error: t("v.domain") };
}

/** The custom domains of one app (a pod, a pod group or a static site, by its slug): add, verify, delete. */
export function DomainsCard({ slug }: { slug: string }) {
  const { t } = useI18n();
  const params = { params: { path: { slug } } };
  // a verification or certificate failure found by the platform's own checks comes on the live event stream; a
  // pending domain is also polled, slowly beside the stream and every 15 s while it is down
  let live = false;
  const list = useLoad(
    async () => (await unwrap(api.GET("/v1/apps/{slug}/domains", params))) as Domain[],
    [slug],
    (domains) => (domains.some((d) => d.status === "pending") ? (live ? 60_000 : 15_000) : null),
  );
  live = useEventStream(DOMAIN_EVENTS, list.reload);
  const [name, setName] = useState("");
  const [invalid, setInvalid] = useState<string | null>(null);
  const add = useAction(async (domain: string) => {
    const created = (await unwrap(api.POST("/v1/apps/{slug}/domains", { ...params, body: { domain } }))) as Domain;
    list.setData([...(list.data ?? []), created]);
    setName("");
  });
  const replace = (d: Domain) => list.setData((list.data ?? []).map((x) => (x.id === d.id ? d : x)));
  const removed = (id: string) => list.setData((list.data ?? []).filter((x) => x.id !== id));
  return (
    <Card title={t("dom.title")}>
      <p className="muted">{t("dom.intro")}</p>
      <form
        className="inline-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const checked = checkDomain(name, t);
          setInvalid("error" in checked ? checked.error : null);
          if ("domain" in checked) void add.run(checked.domain);
        }}
      >
        <TextField
          label={t("dom.add")}
          error={invalid}
          hint={t("dom.addHint")}
          name="domain"
          className="mono"
          placeholder="www.example.com"
          spellCheck={false}
          autoComplete="off"
          inputMode="url"
          value={name}
          onValue={setName}
        />
        <Submit busy={add.busy}>{t("dom.addButton")}</Submit>
      </form>
      <ErrorNote error={add.error || list.error} />
      {!list.data && !list.error && <Spinner label={t("common.loading")} />}
      {list.data && list.data.length === 0 && <p className="empty">{t("dom.empty")}</p>}
      <div className="domain-list">
        {(list.data ?? []).map((d) => (
          <DomainRow key={d.id} slug={slug} domain={d} onChanged={replace} onDeleted={() => removed(d.id)} />
        ))}
      </div>
    </Card>
  );
}
