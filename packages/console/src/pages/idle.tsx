import { useState } from "react";
import { api, unwrap, type Pod, type PodGroup } from "../api";
import { useI18n } from "../i18n";
import { TextField } from "../fields";
import { Card, ErrorNote, Notice, Submit, useAction } from "../ui";

/*
 * Scale-to-zero (issue 30): the idle setting of a pod or pod group, and whether it sleeps now. The fields are read
 * and sent beside the generated SDK types until its next generation names them (`npm run sdk:generate`).
 */
type IdleFields = { idle_stop_seconds?: number | null };
export const idleSecondsOf = (app: object) => (app as IdleFields).idle_stop_seconds ?? null;

/** stopped for idleness: desired state idle_stopped (a pod) or state idle_stopped (a group) */
export const asleep = (app: { desired_state?: string; state: string }) =>
  app.desired_state === "idle_stopped" || app.state === "idle_stopped";

/** The state a badge shows: idle_stopped once an idle-stopped pod's containers are gone. */
export const shownState = (p: { desired_state: string; state: string }) =>
  p.desired_state === "idle_stopped" && p.state === "stopped" ? "idle_stopped" : p.state;

const MAX_MINUTES = 43_200;

/** The idle setting in minutes (empty: never), saved by PATCH; a change is no deployment. */
export function IdleCard(props: {
  kind: "pod" | "group";
  app: Pod | PodGroup;
  onSaved: (next: Pod | PodGroup) => void;
}) {
  const { t } = useI18n();
  const seconds = idleSecondsOf(props.app);
  const [minutes, setMinutes] = useState(seconds === null ? "" : String(Math.max(1, Math.round(seconds / 60))));
  const [invalid, setInvalid] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const action = useAction(async () => {
    const body = { idle_stop_seconds: minutes.trim() ? Number(minutes) * 60 : null } as never;
    const params = { params: { path: { id: props.app.id } }, body };
    props.onSaved(
      props.kind === "pod"
        ? ((await unwrap(api.PATCH("/v1/pods/{id}", params))) as Pod)
        : ((await unwrap(api.PATCH("/v1/pod-groups/{id}", params))) as PodGroup),
    );
    setDone(true);
  });
  return (
    <Card title={t("idle.title")}>
      <p className="muted" data-testid="idle-setting">
        {seconds === null ? t("idle.never") : t("idle.current", { n: Math.max(1, Math.round(seconds / 60)) })}
      </p>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setDone(false);
          const m = minutes.trim();
          const bad =
            !m || (/^\d{1,5}$/.test(m) && Number(m) >= 1 && Number(m) <= MAX_MINUTES) ? null : t("v.idleMinutes");
          setInvalid(bad);
          if (!bad) void action.run();
        }}
      >
        <TextField
          label={t("idle.minutes")}
          hint={t("idle.hint")}
          error={invalid}
          name="idle-minutes"
          inputMode="numeric"
          autoComplete="off"
          value={minutes}
          onValue={setMinutes}
        />
        <ErrorNote error={action.error} />
        {done && <Notice>{t("common.saved")}</Notice>}
        <Submit busy={action.busy}>{t("common.save")}</Submit>
      </form>
    </Card>
  );
}
