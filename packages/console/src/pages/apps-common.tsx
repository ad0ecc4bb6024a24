import { api, unwrap, type Pod } from "../api";
import { money, useI18n } from "../i18n";
import { Link } from "../router";
import { useLoad } from "../ui";

export const SLUG = /^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/;
export const IMAGE = /^[a-zA-Z0-9][a-zA-Z0-9._/:@-]{0,511}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** The apps section's own tabs: pods, groups, builds, volumes, templates. */
export function AppsTabs() {
  const { t } = useI18n();
  const tabs: [string, string][] = [
    ["/pods", t("apps.pods")],
    ["/pod-groups", t("apps.groups")],
    ["/builds", t("apps.builds")],
    ["/previews", t("apps.previews")],
    ["/cron-jobs", t("cron.title")],
    ["/alerts", t("alerts.tab")],
    ["/log-drains", t("drains.tab")],
    ["/volumes", t("apps.volumes")],
    ["/templates", t("apps.templates")],
  ];
  return (
    <nav className="tabs" aria-label={t("apps.sections")}>
      {tabs.map(([to, label]) => (
        <Link key={to} to={to}>
          {label}
        </Link>
      ))}
    </nav>
  );
}

/** A pod is changing while it is not yet where it was asked to be, or a new generation is not serving yet. */
export function podBusy(p: Pick<Pod, "state" | "desired_state" | "generation" | "serving_generation">): boolean {
  if (p.state === "creating") return true;
  if (p.state === "failed") return false;
  // stopped for idleness is stopped (src/apps/README.md): nothing under way
  const desired = p.desired_state === "idle_stopped" ? "stopped" : p.desired_state;
  if (desired !== p.state) return true;
  return p.state === "running" && p.serving_generation !== null && p.serving_generation !== p.generation;
}

/**
 * A command line split into its arguments as a shell would split words: spaces separate, single and double
 * quotes group, a backslash escapes the next character. Null while a quote is open.
 */
export function splitArgs(line: string): string[] | null {
  const out: string[] = [];
  let cur = "";
  let quote: '"' | "'" | null = null;
  let started = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      started = true;
    } else if (c === "\\" && i + 1 < line.length) {
      cur += line[++i];
      started = true;
    } else if (/\s/.test(c)) {
      if (started) out.push(cur);
      cur = "";
      started = false;
    } else {
      cur += c;
      started = true;
    }
  }
  if (quote) return null;
  if (started) out.push(cur);
  return out;
}

/** Arguments shown as one line, quoted where needed, so splitArgs reads them back. */
export function joinArgs(args: string[] | null | undefined): string {
  return (args ?? []).map((a) => (/^[\w./:=@%+,-]+$/.test(a) ? a : `'${a.replace(/'/g, `'"'"'`)}'`)).join(" ");
}

export interface EnvRow {
  name: string;
  value: string;
}

/** The first problem of an env editor's rows, as a message key, or null. */
export function envProblem(rows: EnvRow[]): "v.envName" | "v.envDup" | null {
  const used = rows.filter((r) => r.name.trim() || r.value);
  if (used.some((r) => !ENV_NAME.test(r.name.trim()))) return "v.envName";
  const names = used.map((r) => r.name.trim());
  return new Set(names).size === names.length ? null : "v.envDup";
}

export const envObject = (rows: EnvRow[]): Record<string, string> =>
  Object.fromEntries(rows.filter((r) => r.name.trim()).map((r) => [r.name.trim(), r.value]));

/** Name/value rows with add and remove; names are checked by envProblem before sending. */
export function EnvEditor({
  rows,
  onChange,
  error,
}: {
  rows: EnvRow[];
  onChange: (rows: EnvRow[]) => void;
  error?: string | null;
}) {
  const { t } = useI18n();
  const set = (i: number, patch: Partial<EnvRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset className={`env-editor${error ? " invalid" : ""}`}>
      <legend>{t("pods.env")}</legend>
      {rows.length === 0 && <p className="hint">{t("env.empty")}</p>}
      {rows.map((r, i) => (
        <div className="env-row" key={i}>
          <input
            aria-label={`${t("env.name")} ${i + 1}`}
            placeholder={t("env.name")}
            spellCheck={false}
            autoComplete="off"
            value={r.name}
            aria-invalid={!!error && !ENV_NAME.test(r.name.trim())}
            onChange={(e) => set(i, { name: e.target.value })}
          />
          <input
            aria-label={`${t("env.value")} ${i + 1}`}
            placeholder={t("env.value")}
            spellCheck={false}
            autoComplete="off"
            value={r.value}
            onChange={(e) => set(i, { value: e.target.value })}
          />
          <button
            type="button"
            className="btn small ghost"
            aria-label={`${t("env.remove")} ${r.name || i + 1}`}
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          >
            ✕
          </button>
        </div>
      ))}
      {error && <p className="field-error">{error}</p>}
      <button type="button" className="btn small" onClick={() => onChange([...rows, { name: "", value: "" }])}>
        + {t("env.add")}
      </button>
    </fieldset>
  );
}

interface Sku {
  id: string;
  name: string;
  price_krw_per_hour: number;
}

/** The sizes a pod can ask for: nano (free) and micro of the platform's own, then the SKUs /v1/gpus lists. */
export function useSizes() {
  const { t, locale } = useI18n();
  const catalog = useLoad(async () => (await unwrap(api.GET("/v1/gpus"))) as { skus: Sku[] }, []);
  const sizes: { id: string; label: string }[] = [
    { id: "nano", label: `nano · 0.25 vCPU / 256 MiB · ${t("pods.sizeFree")}` },
    { id: "micro", label: "micro · 0.5 vCPU / 512 MiB" },
    ...(catalog.data?.skus ?? []).map((s) => ({
      id: s.id,
      label: `${s.id} · ${s.name} · ${t("pods.perHour", { amount: money(locale, s.price_krw_per_hour) })}`,
    })),
  ];
  return sizes;
}

/** The caller's registry images (GET /v1/registry) as full references with their tags; empty when unavailable. */
export function useRegistryImages() {
  const reg = useLoad(async () => {
    try {
      return await unwrap(api.GET("/v1/registry"));
    } catch {
      return null; // no registry on this platform, or the key may not read it: the picker stays hidden
    }
  }, []);
  const images = (reg.data?.repositories ?? []).flatMap((r) => r.tags.map((tag) => `${r.image}:${tag}`));
  return { loaded: reg.data !== null && reg.data !== undefined, images };
}

/** the events that change what the pod pages show (their live event stream, ui.tsx useEventStream) */
export const POD_EVENTS = ["pod.rollout.succeeded", "pod.rollout.rolled_back", "pod.crash_loop"];
