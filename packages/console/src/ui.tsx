import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from "react";
import { describeError, ownerContext } from "./api";
import { useI18n, type MessageKey } from "./i18n";

/** An API error in words, with its code. */
export function ErrorNote({ error }: { error: unknown }) {
  const { t } = useI18n();
  if (!error) return null;
  const { message, code } = describeError(error);
  return (
    <div className="note error" role="alert">
      <span>{message}</span>
      {code && (
        <span className="code">
          {t("common.errorCode")}: <code>{code}</code>
        </span>
      )}
    </div>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <div className="note ok" role="status">
      {children}
    </div>
  );
}

export function Spinner({ label }: { label?: string }) {
  return (
    <span className="spinner-wrap" role="status">
      <span className="spinner" aria-hidden="true" />
      {label && <span>{label}</span>}
    </span>
  );
}

export function Card({ title, children, actions }: { title?: ReactNode; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card">
      {(title || actions) && (
        <header className="card-head">
          {title && <h2>{title}</h2>}
          {actions}
        </header>
      )}
      {children}
    </section>
  );
}

/** A labelled input with its validation message; the message is tied to the input for screen readers. */
export function Field(props: {
  label: string;
  error?: string | null;
  hint?: string;
  children: (ids: { id: string; describedBy?: string; invalid: boolean }) => ReactNode;
}) {
  const id = useId();
  const msg = `${id}-msg`;
  return (
    <div className={`field${props.error ? " invalid" : ""}`}>
      <label htmlFor={id}>{props.label}</label>
      {props.children({ id, describedBy: props.error || props.hint ? msg : undefined, invalid: !!props.error })}
      {props.error ? (
        <p className="field-error" id={msg}>
          {props.error}
        </p>
      ) : (
        props.hint && (
          <p className="hint" id={msg}>
            {props.hint}
          </p>
        )
      )}
    </div>
  );
}

/** A submit button that shows progress while its action runs. */
export function Submit({ busy, children, kind = "primary" }: { busy: boolean; children: ReactNode; kind?: string }) {
  const { t } = useI18n();
  return (
    <button type="submit" className={`btn ${kind}`} disabled={busy} aria-busy={busy}>
      {busy ? <Spinner label={t("common.working")} /> : children}
    </button>
  );
}

/** Runs an async action, keeping its busy state and error for display. */
export function useAction<A extends unknown[]>(fn: (...args: A) => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(
    async (...args: A) => {
      setBusy(true);
      setError(null);
      try {
        await fn(...args);
        return true;
      } catch (err) {
        setError(err);
        return false;
      } finally {
        setBusy(false);
      }
    },
    [fn],
  );
  return { busy, error, run, setError };
}

/** Loads data, again when `deps` change; `reload` fetches again. `intervalMs` polls while it returns a number. */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[], poll?: (data: T) => number | null) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  const pollRef = useRef(poll);
  pollRef.current = poll;
  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const value = await fn();
        if (!alive) return;
        setData(value);
        setError(null);
        const next = pollRef.current?.(value);
        if (next) timer = setTimeout(load, next);
      } catch (err) {
        if (alive) setError(err);
      }
    };
    void load();
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [...deps, tick]);
  return { data, error, reload: () => setTick((n) => n + 1), setData };
}

/**
 * The caller's events of `types` from the live stream (GET /v1/events/stream): `onEvent` runs on each, so a page
 * reloads when something it shows changed instead of polling for it. Answers whether the stream is open; while it
 * is not (dropped, reconnecting, or never opened) pages keep their fallback poll. EventSource cannot send X-Owner,
 * so in the company context the stream stays off and pages poll as before. The browser reconnects by itself with
 * Last-Event-ID.
 */
export function useEventStream(types: readonly string[], onEvent: () => void): boolean {
  const [live, setLive] = useState(false);
  const onEventRef = useRef(onEvent);
  onEventRef.current = onEvent;
  const key = types.join(",");
  useEffect(() => {
    if (typeof EventSource === "undefined" || ownerContext() !== "me") return;
    const source = new EventSource(`/v1/events/stream?type=${encodeURIComponent(key)}`, { withCredentials: true });
    const handle = () => onEventRef.current();
    for (const type of key.split(",")) source.addEventListener(type, handle);
    let open = false;
    source.onopen = () => {
      open = true;
      setLive(true);
    };
    // dropped: one reload now (what changed meanwhile), and the page's fallback poll runs until it is back
    source.onerror = () => {
      setLive(false);
      if (open) handle();
      open = false;
    };
    return () => {
      source.close();
      setLive(false);
    };
  }, [key]);
  return live;
}

export function CopyButton({ text, label }: { text: string; label?: string }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="btn small"
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => {});
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
      aria-label={label ? `${t("common.copy")} ${label}` : t("common.copy")}
    >
      {copied ? t("common.copied") : t("common.copy")}
    </button>
  );
}

/** A secret shown once, selectable, with a copy button. */
export function Secret({ label, value }: { label: string; value: string }) {
  return (
    <div className="secret">
      <span className="secret-label">{label}</span>
      <code className="secret-value" data-secret={label}>
        {value}
      </code>
      <CopyButton text={value} label={label} />
    </div>
  );
}

/** A resource's state in words; a spinner while it is creating, or while `busy` says it is changing. */
export function StateBadge({ state, busy: changing = false }: { state: string; busy?: boolean }) {
  const { t } = useI18n();
  const key = `state.${state}` as MessageKey;
  const busy = state === "creating" || changing;
  return (
    <span className={`badge state-${state}`} data-state={state}>
      {busy && <span className="spinner tiny" aria-hidden="true" />}
      {t(key) === key ? state : t(key)}
    </span>
  );
}

/**
 * A dangerous action that needs a name typed to confirm. `children` are further fields shown before the error
 * (a bucket's "delete all objects too"); `errorNote` renders an error in the page's own words.
 */
export function TypeToConfirm(props: {
  expected: string;
  hint: string;
  label: string;
  onConfirm: () => Promise<unknown>;
  children?: ReactNode;
  errorNote?: (error: unknown) => ReactNode;
}) {
  const { t } = useI18n();
  const [typed, setTyped] = useState("");
  const [invalid, setInvalid] = useState<string | null>(null);
  const action = useAction(props.onConfirm);
  return (
    <form
      className="danger-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (typed !== props.expected) return setInvalid(t("v.confirmName"));
        setInvalid(null);
        void action.run();
      }}
    >
      <Field label={props.hint} error={invalid}>
        {({ id, describedBy, invalid }) => (
          <input
            id={id}
            aria-describedby={describedBy}
            aria-invalid={invalid}
            value={typed}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => setTyped(e.target.value)}
          />
        )}
      </Field>
      {props.children}
      {(action.error !== null && action.error !== undefined && props.errorNote?.(action.error)) || (
        <ErrorNote error={action.error} />
      )}
      <Submit busy={action.busy} kind="danger">
        {props.label}
      </Submit>
    </form>
  );
}
