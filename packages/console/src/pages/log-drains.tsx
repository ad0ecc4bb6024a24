import { useState } from "react";
import { client } from "../api";
import { useI18n, when, type MessageKey } from "../i18n";
import { TextField, NameField } from "../fields";
import { DeleteButton, Loaded, PageHead, ResourceTable, srOnly } from "../lists";
import { Card, ErrorNote, Field, Submit, useAction, useLoad } from "../ui";
import { AppsTabs, SLUG } from "./apps-common";

/** GET /v1/log-drains's items (typed here until the SDK's schema is generated again with the drains routes). */
interface LogDrain {
  id: string;
  name: string;
  destination: string;
  source: "pods" | "edge";
  app: { kind: string; id: string } | null;
  enabled: boolean;
  state: {
    status: "waiting" | "delivering" | "failing" | "disabled";
    delivered_count: number;
    dropped_count: number;
    failed_attempts: number;
    last_error: string | null;
    last_error_at: string | null;
    last_success_at: string | null;
  };
}

const DESTINATION = /^(https|syslog|syslog\+tls):\/\/[^\s/]+/;

/** Log drains with their delivered, dropped and failed counts, refreshed each 15 s (the shippers run each second). */
export function LogDrainsPage() {
  const { t, locale } = useI18n();
  const list = useLoad(
    async () => ((await client.request("GET", "/v1/log-drains")) as { items: LogDrain[] }).items,
    [],
    () => 15_000,
  );
  const remove = useAction(async (d: LogDrain) => {
    if (!window.confirm(t("drains.deleteConfirm", { name: d.name }))) return;
    await client.request("DELETE", `/v1/log-drains/${encodeURIComponent(d.id)}`);
    list.reload();
  });
  const count = (head: MessageKey, pick: (d: LogDrain) => number) => ({
    head: t(head),
    className: "right",
    cellClass: "right num",
    cell: (d: LogDrain) => String(pick(d)),
  });
  return (
    <>
      <AppsTabs />
      <PageHead title={t("drains.title")} intro={t("drains.intro")} />
      <div className="grid side">
        <Card title={t("drains.title")}>
          <Loaded list={list} error={list.error || remove.error} empty={t("drains.empty")}>
            {(rows) => (
              <ResourceTable
                rows={rows}
                testId="log-drains"
                rowData={(d) => ({ "data-name": d.name, "data-status": d.state.status })}
                columns={[
                  {
                    head: t("drains.name"),
                    cell: (d) => (
                      <>
                        <strong>{d.name}</strong>
                        <div className="muted small">
                          <code>{d.destination}</code>
                        </div>
                        <div className="muted small">
                          {t(`drains.source.${d.source}` as MessageKey)} ·{" "}
                          {d.app ? `${d.app.kind} ${d.app.id.slice(0, 8)}` : t("drains.allApps")}
                        </div>
                      </>
                    ),
                  },
                  {
                    head: t("drains.status"),
                    cell: (d) => (
                      <>
                        <span className={`badge state-${d.state.status}`} data-state={d.state.status}>
                          {t(`drains.status.${d.state.status}` as MessageKey)}
                        </span>
                        {d.state.last_success_at && (
                          <div className="muted small">
                            {t("drains.lastSuccess", { when: when(locale, d.state.last_success_at) })}
                          </div>
                        )}
                      </>
                    ),
                  },
                  count("drains.delivered", (d) => d.state.delivered_count),
                  count("drains.dropped", (d) => d.state.dropped_count),
                  count("drains.failed", (d) => d.state.failed_attempts),
                  {
                    head: t("drains.lastError"),
                    className: "hide-sm",
                    cell: (d) =>
                      d.state.last_error ? (
                        <span className="small" title={d.state.last_error_at ?? undefined}>
                          {d.state.last_error}
                        </span>
                      ) : (
                        "—"
                      ),
                  },
                  {
                    head: srOnly(t("common.delete")),
                    cellClass: "right",
                    cell: (d) => <DeleteButton target={d.name} busy={remove.busy} onClick={() => void remove.run(d)} />,
                  },
                ]}
              />
            )}
          </Loaded>
        </Card>
        <NewLogDrain onCreated={list.reload} />
      </div>
    </>
  );
}

function NewLogDrain({ onCreated }: { onCreated: () => void }) {
  const { t } = useI18n();
  const [name, setName] = useState("");
  const [destination, setDestination] = useState("");
  const [source, setSource] = useState<"pods" | "edge">("pods");
  const [errors, setErrors] = useState<{ name?: string; destination?: string }>({});
  const action = useAction(async () => {
    await client.request("POST", "/v1/log-drains", { body: { name, destination, source } });
    setName("");
    setDestination("");
    onCreated();
  });
  return (
    <Card title={t("drains.create")}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const errs = {
            name: !name ? t("v.required") : SLUG.test(name) ? undefined : t("v.slug"),
            destination: DESTINATION.test(destination) ? undefined : t("drains.destinationHint"),
          };
          setErrors(errs);
          if (!errs.name && !errs.destination) void action.run();
        }}
      >
        <NameField
          label={t("drains.name")}
          name="drain-name"
          value={name}
          onValue={setName}
          error={errors.name}
          hint={t("pods.nameHint")}
        />
        <TextField
          label={t("drains.destination")}
          name="drain-destination"
          autoComplete="off"
          value={destination}
          onValue={setDestination}
          error={errors.destination}
          hint={t("drains.destinationHint")}
        />
        <Field label={t("drains.source")}>
          {({ id }) => (
            <select
              id={id}
              name="drain-source"
              value={source}
              onChange={(e) => setSource(e.target.value as "pods" | "edge")}
            >
              <option value="pods">{t("drains.source.pods")}</option>
              <option value="edge">{t("drains.source.edge")}</option>
            </select>
          )}
        </Field>
        <ErrorNote error={action.error} />
        <Submit busy={action.busy}>{t("drains.create")}</Submit>
      </form>
    </Card>
  );
}
