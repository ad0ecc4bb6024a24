import { useState } from "react";
import { api, unwrap, type PodGroup } from "../api";
import { useI18n, when } from "../i18n";
import { Link, useRouter } from "../router";
import { NameField } from "../fields";
import { ListPage, PageHead } from "../lists";
import { asleep } from "./idle";
import { Card, ErrorNote, Field, StateBadge, Submit, useAction, useLoad } from "../ui";
import { AppsTabs, SLUG } from "./apps-common";
import { checkSpec, specBody, SpecFields, useSpec, type SpecErrors } from "./spec-fields";

/** A group is changing while a member is being created or it has fewer running members than it wants. */
export const groupBusy = (g: PodGroup) =>
  g.state === "creating" ||
  g.replicas.some((r) => r.state === "creating") ||
  (g.state !== "stopped" &&
    !asleep(g) &&
    g.replicas.filter((r) => r.state === "running").length !== g.desired_replicas);

const whole = (s: string, min: number, max: number) => /^\d{1,3}$/.test(s) && Number(s) >= min && Number(s) <= max;

export function GroupsPage() {
  const { t, locale } = useI18n();
  const list = useLoad(
    async () => (await unwrap(api.GET("/v1/pod-groups"))) as PodGroup[],
    [],
    (gs) => (gs.some(groupBusy) ? 1500 : 5000),
  );
  return (
    <>
      <AppsTabs />
      <ListPage
        title={t("groups.title")}
        intro={t("groups.intro")}
        create={{ to: "/pod-groups/new", label: t("groups.create") }}
        list={list}
        empty={t("groups.empty")}
        columns={[
          { head: t("pods.name"), cell: (g) => <Link to={`/pod-groups/${g.id}`}>{g.name}</Link> },
          { head: t("pods.state"), cell: (g) => <StateBadge state={g.state} busy={groupBusy(g)} /> },
          {
            head: t("groups.replicas"),
            cell: (g) =>
              t("groups.count", {
                n: g.replicas.filter((r) => r.state === "running").length,
                min: g.replica_min,
                max: g.replica_max,
              }),
          },
          {
            head: t("pods.image"),
            cell: (g) => (
              <code className="clip" title={g.image}>
                {g.image}
              </code>
            ),
          },
          { head: t("pods.created"), className: "hide-sm", cell: (g) => when(locale, g.created_at) },
        ]}
      />
    </>
  );
}

type Bounds = { min: string; max: string; cpu: string };
type BoundErrors = { min?: string; max?: string; cpu?: string };

/** Replica bounds and CPU target, checked together (min ≤ max). */
export function checkBounds(b: Bounds, t: ReturnType<typeof useI18n>["t"]): BoundErrors {
  const errs: BoundErrors = {
    min: whole(b.min, 1, 20) ? undefined : t("v.range", { min: 1, max: 20 }),
    max: whole(b.max, 1, 20) ? undefined : t("v.range", { min: 1, max: 20 }),
    cpu: whole(b.cpu, 10, 100) ? undefined : t("v.range", { min: 10, max: 100 }),
  };
  if (!errs.min && !errs.max && Number(b.min) > Number(b.max)) errs.max = t("v.replicas");
  return errs;
}

export function BoundsFields({ b, set, errors }: { b: Bounds; set: (b: Bounds) => void; errors: BoundErrors }) {
  const { t } = useI18n();
  // a render function for Field (called, not mounted as a component, so inputs keep their focus)
  const input =
    (key: keyof Bounds, name: string) =>
    ({ id, describedBy, invalid }: { id: string; describedBy?: string; invalid: boolean }) => (
      <input
        id={id}
        name={name}
        inputMode="numeric"
        aria-describedby={describedBy}
        aria-invalid={invalid}
        value={b[key]}
        onChange={(e) => set({ ...b, [key]: e.target.value })}
      />
    );
  return (
    <div className="field-trio">
      <Field label={t("groups.replicaMin")} error={errors.min}>
        {input("min", "replica-min")}
      </Field>
      <Field label={t("groups.replicaMax")} error={errors.max}>
        {input("max", "replica-max")}
      </Field>
      <Field label={t("groups.targetCpu")} error={errors.cpu} hint={t("groups.targetCpuHint")}>
        {input("cpu", "target-cpu")}
      </Field>
    </div>
  );
}

export function NewGroupPage() {
  const { t } = useI18n();
  const { navigate } = useRouter();
  const { spec, set } = useSpec();
  const [name, setName] = useState("");
  const [bounds, setBounds] = useState<Bounds>({ min: "1", max: "3", cpu: "70" });
  const [errors, setErrors] = useState<SpecErrors & BoundErrors & { name?: string }>({});
  const action = useAction(async () => {
    const body = {
      name,
      ...specBody(spec),
      image: spec.image.trim(),
      replica_min: Number(bounds.min),
      replica_max: Number(bounds.max),
      target_cpu_percent: Number(bounds.cpu),
    };
    const created = await unwrap(api.POST("/v1/pod-groups", { body }));
    navigate(`/pod-groups/${created.id}`);
  });
  return (
    <>
      <AppsTabs />
      <PageHead title={t("groups.create")} back="/pod-groups" />
      <Card>
        <form
          className="narrow wide"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            const errs = {
              ...checkSpec(spec, t, true),
              ...checkBounds(bounds, t),
              name: !name ? t("v.required") : SLUG.test(name) ? undefined : t("v.slug"),
            };
            setErrors(errs);
            if (!Object.values(errs).some(Boolean)) void action.run();
          }}
        >
          <NameField
            label={t("pods.name")}
            name="group-name"
            value={name}
            onValue={setName}
            error={errors.name}
            hint={t("pods.nameHint")}
          />
          <BoundsFields b={bounds} set={setBounds} errors={errors} />
          <SpecFields spec={spec} set={set} errors={errors} />
          <ErrorNote error={action.error} />
          <Submit busy={action.busy}>{t("groups.create")}</Submit>
        </form>
      </Card>
    </>
  );
}
