import type { InputHTMLAttributes } from "react";
import { useI18n } from "./i18n";
import { Card, CopyButton, Field, TypeToConfirm } from "./ui";

/**
 * A labelled text input with its validation message or hint; the other props go to the input. `onValue` gets the
 * typed text, lowercased with `lower` (names and slugs).
 */
export function TextField({
  label,
  error,
  hint,
  lower = false,
  onValue,
  ...input
}: {
  label: string;
  error?: string | null;
  hint?: string;
  lower?: boolean;
  value: string;
  onValue: (value: string) => void;
} & Omit<InputHTMLAttributes<HTMLInputElement>, "id" | "value" | "onChange">) {
  return (
    <Field label={label} error={error} hint={hint}>
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          {...input}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onChange={(e) => onValue(lower ? e.target.value.toLowerCase() : e.target.value)}
        />
      )}
    </Field>
  );
}

/** A resource name field (lowercased as typed, no autocomplete). */
export function NameField(props: {
  label: string;
  name: string;
  value: string;
  onValue: (value: string) => void;
  error?: string;
  hint?: string;
}) {
  return <TextField {...props} autoComplete="off" lower />;
}

/** The card that deletes a resource once its name is typed. */
export function DeleteByName(props: { title: string; name: string; hint: string; onConfirm: () => Promise<unknown> }) {
  return (
    <Card title={props.title}>
      <TypeToConfirm expected={props.name} hint={props.hint} label={props.title} onConfirm={props.onConfirm} />
    </Card>
  );
}

/** A term and its value with a copy button ("—" without a value), inside a `<dl>`. */
export function CopyField(props: {
  term: string;
  value: string | null | undefined;
  copyLabel?: string;
  testId?: string;
  plain?: boolean;
}) {
  return (
    <>
      <dt>{props.term}</dt>
      <dd className={props.plain ? undefined : "copy-line"} data-testid={props.testId}>
        {props.value ? (
          <>
            <code>{props.value}</code>
            <CopyButton text={props.value} label={props.copyLabel ?? props.term} />
          </>
        ) : (
          "—"
        )}
      </dd>
    </>
  );
}

/** A new app's name and optional slug, side by side. */
export function NameAndSlug(props: {
  label: string;
  inputName: string;
  name: string;
  setName: (v: string) => void;
  slug: string;
  setSlug: (v: string) => void;
  slugHint: string;
  errors: { name?: string; slug?: string };
}) {
  const { t } = useI18n();
  return (
    <div className="field-pair">
      <NameField
        label={props.label}
        name={props.inputName}
        value={props.name}
        onValue={props.setName}
        error={props.errors.name}
        hint={t("pods.nameHint")}
      />
      <NameField
        label={t("pods.slug")}
        name="slug"
        value={props.slug}
        onValue={props.setSlug}
        error={props.errors.slug}
        hint={props.slugHint}
      />
    </div>
  );
}
