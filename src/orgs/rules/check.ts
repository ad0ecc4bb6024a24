/**
 * Deploy rules as pure functions: whether a request breaks them (and which rule), whether a rules document makes
 * sense against the price catalog, and the rules in words for agents.
 */
import type { AdmissionRequest } from "../../kernel/contracts.js";
import { priceOf, prices, type PriceCatalog } from "../../billing/public.js";
import { ApiError } from "../../http/errors.js";
import type { DeployRules, Preset } from "./schema.js";

/** admission kinds whose shape has another name (a pod group's members say shape pod-group themselves) */
const KIND_SHAPES: Record<string, string> = { "static-site": "site" };

export const shapeOf = (r: Pick<AdmissionRequest, "kind" | "shape">): string =>
  r.shape ?? KIND_SHAPES[r.kind] ?? r.kind;

/** What the rules look at in a request (or a preset). */
export interface RuleTarget {
  shape: string;
  /** absent: a preset that takes the area's default size */
  size?: string;
  image?: string;
  gpu?: number;
  replicas?: number;
  storageGb?: number;
  features?: string[];
  region?: string;
}

export const targetOf = (r: AdmissionRequest): RuleTarget => ({
  shape: shapeOf(r),
  size: r.size,
  image: r.image,
  gpu: r.gpu,
  replicas: r.replicas,
  storageGb: r.storageGb,
  features: r.features,
  region: r.region,
});

/** An image reference in full form: `nginx` is docker.io/library/nginx, `me/app` is docker.io/me/app. */
export function fullImage(ref: string): string {
  const first = ref.split("/")[0];
  if (ref.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost")) return ref;
  return `docker.io/${ref.includes("/") ? "" : "library/"}${ref}`;
}

const isPodShape = (shape: string) => shape === "pod" || shape === "pod-group";
const podPrice = (c: PriceCatalog, size: string) => priceOf(c, "pod", size)?.krw_per_hour ?? null;

/** The first rule the target breaks, named in the message, or null when it breaks none. */
export function violation(rules: DeployRules, t: RuleTarget, c: PriceCatalog = prices()): string | null {
  const broken = (rule: string, detail: string) => `The organization's deploy rule ${rule} forbids this: ${detail}.`;
  if (rules.allowed_shapes && !rules.allowed_shapes.includes(t.shape as never))
    return broken("allowed_shapes", `${t.shape} is not one of ${rules.allowed_shapes.join(", ")}`);
  if (rules.max_app_size && isPodShape(t.shape) && t.size !== undefined) {
    const max = podPrice(c, rules.max_app_size);
    const size = podPrice(c, t.size);
    if (max === null || size === null || size > max)
      return broken("max_app_size", `size ${t.size} is larger than ${rules.max_app_size}`);
  }
  const gpu = t.gpu ?? 0;
  if (gpu > 0 && rules.gpu_allowed === false) return broken("gpu_allowed", `size ${t.size} has a GPU`);
  if (rules.max_gpu !== undefined && gpu > rules.max_gpu)
    return broken("max_gpu", `the app would hold ${gpu} GPUs, more than ${rules.max_gpu}`);
  if (rules.database_sizes && t.shape === "database" && t.size !== undefined && !rules.database_sizes.includes(t.size))
    return broken("database_sizes", `database size ${t.size} is not one of ${rules.database_sizes.join(", ")}`);
  for (const f of t.features ?? []) {
    if ((rules.features as Record<string, boolean | undefined> | undefined)?.[f] === false)
      return broken(`features.${f}`, `${f} is turned off for the company`);
  }
  if (rules.image_prefixes && t.image !== undefined) {
    const forms = [t.image, fullImage(t.image)];
    if (!rules.image_prefixes.some((p) => forms.some((f) => f.startsWith(p))))
      return broken("image_prefixes", `${t.image} does not start with ${rules.image_prefixes.join(" or ")}`);
  }
  const maxReplicas = rules.limits?.max_replicas;
  if (maxReplicas !== undefined && (t.replicas ?? 1) > maxReplicas)
    return broken("limits.max_replicas", `${t.replicas} replicas is more than ${maxReplicas}`);
  const maxGb = rules.limits?.max_storage_gb;
  if (maxGb !== undefined && (t.shape === "database" || t.shape === "volume") && (t.storageGb ?? 0) > maxGb)
    return broken("limits.max_storage_gb", `${t.storageGb} GB is more than ${maxGb} GB`);
  if (rules.regions && t.region !== undefined && !rules.regions.includes(t.region))
    return broken("regions", `region ${t.region} is not one of ${rules.regions.join(", ")}`);
  return null;
}

const presetTarget = (p: Preset): RuleTarget => ({
  shape: p.shape,
  size: p.size,
  image: p.image,
  replicas: p.replicas,
  storageGb: p.storage_gb,
  features: p.features,
});

/** Refuses (400 invalid_request) sizes the catalog does not know and presets the rules themselves forbid. */
export function validateRules(rules: DeployRules, c: PriceCatalog = prices()): void {
  const bad = (msg: string) => new ApiError("invalid_request", msg);
  const known = (kind: string) => Object.keys(c.resources[kind]?.sizes ?? {});
  if (rules.max_app_size && !known("pod").includes(rules.max_app_size))
    throw bad(`max_app_size "${rules.max_app_size}" is not a pod size; sizes: ${known("pod").join(", ")}.`);
  for (const s of rules.database_sizes ?? [])
    if (!known("database").includes(s))
      throw bad(`database_sizes: "${s}" is not a database size; sizes: ${known("database").join(", ")}.`);
  const names = new Set<string>();
  for (const p of rules.presets ?? []) {
    if (names.has(p.name)) throw bad(`presets: the name "${p.name}" is used twice.`);
    names.add(p.name);
    const broken = violation(rules, presetTarget(p), c);
    if (broken) throw bad(`presets: "${p.name}" breaks the rules themselves. ${broken}`);
  }
}

const join = (xs: readonly string[]) => xs.join(", ");

/** The rules in words (what GET answers when the admin wrote no summary). */
export function summarize(rules: DeployRules): string {
  const lines: string[] = [];
  lines.push(rules.allowed_shapes ? `Allowed shapes: ${join(rules.allowed_shapes)}.` : "Every shape may be deployed.");
  if (rules.max_app_size) lines.push(`Pods and pod groups: size ${rules.max_app_size} at most.`);
  if (rules.gpu_allowed === false) lines.push("No GPU sizes.");
  if (rules.max_gpu !== undefined) lines.push(`At most ${rules.max_gpu} GPUs per app.`);
  if (rules.database_sizes) lines.push(`Database sizes: ${join(rules.database_sizes)}.`);
  const off = Object.entries(rules.features ?? {})
    .filter(([, on]) => on === false)
    .map(([f]) => f);
  if (off.length) lines.push(`Turned off: ${join(off)}.`);
  if (rules.image_prefixes) lines.push(`Images must start with: ${join(rules.image_prefixes)}.`);
  if (rules.limits?.max_replicas !== undefined)
    lines.push(`Pod groups: at most ${rules.limits.max_replicas} replicas.`);
  if (rules.limits?.max_storage_gb !== undefined)
    lines.push(`Databases and volumes: at most ${rules.limits.max_storage_gb} GB each.`);
  if (rules.regions) lines.push(`Regions: ${join(rules.regions)}.`);
  for (const p of rules.presets ?? [])
    lines.push(
      `Preset "${p.name}": ${p.shape}${p.size ? ` ${p.size}` : ""}${p.image ? ` ${p.image}` : ""}${p.description ? ` - ${p.description}` : ""}.`,
    );
  const restricted = lines.length > 1 || !!rules.allowed_shapes;
  return [
    restricted
      ? "Company deploy rules (a creation or update that breaks one is refused with 403 deploy_rule_violation):"
      : "No company deploy rules: every shape, size, image and feature is allowed.",
    ...(restricted ? lines : lines.slice(1)),
  ].join("\n");
}
