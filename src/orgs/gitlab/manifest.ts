/**
 * GitOps manifests (README, "GitLab integration and syncs"): one JSON file per company app at
 * `<gitops_namespace>/<slug>.json` in the GitOps repository. Pods and pod groups are a Kubernetes `List` (a
 * Deployment, a Service and an Ingress when the app listens on a port, and a HorizontalPodAutoscaler for a group
 * whose bounds differ); a static site has no image, so its manifest is a `StaticSite` naming the live deployment.
 * Auto-sync reads back what it applies: the image and replicas of pods and groups, a site's deployment id.
 */
import type { AppSpec } from "../../apps/contract.js";
import type { AppKind } from "./repo.js";

export const API_GROUP = "hosting-platform";
const ANN = `${API_GROUP}/`;

/** what an app is now: a site's live deployment (null: nothing finalized yet) or a pod's or group's spec */
export type AppState = { kind: "site"; deploymentId: string | null } | { kind: "pod" | "pod-group"; spec: AppSpec };

/** what a manifest asks for */
export type Desired =
  | { kind: "site"; deploymentId: string }
  | { kind: "pod" | "pod-group"; image: string; replicaMin: number; replicaMax: number };

export class ManifestError extends Error {}

export const manifestPath = (namespace: string, slug: string) => `${namespace}/${slug}.json`;

export const hostFor = (pattern: string, slug: string, namespace: string) =>
  pattern.replaceAll("{slug}", slug).replaceAll("{namespace}", namespace);

type Json = Record<string, unknown>;

export function buildManifest(
  app: { kind: AppKind; id: string; slug: string },
  state: AppState,
  at: { namespace: string; host: string },
): Json {
  const labels = { app: app.slug };
  const annotations = { [`${ANN}app-kind`]: app.kind, [`${ANN}app-id`]: app.id };
  const metadata = { name: app.slug, namespace: at.namespace, labels, annotations };
  if (state.kind === "site") {
    return {
      apiVersion: `${API_GROUP}/v1`,
      kind: "StaticSite",
      metadata,
      spec: { host: at.host, deploymentId: state.deploymentId },
    };
  }
  const s = state.spec;
  const hpa = state.kind === "pod-group" && s.replicaMax !== s.replicaMin;
  const container: Json = { name: app.slug, image: s.image };
  if (s.port !== null) container.ports = [{ containerPort: s.port }];
  const items: Json[] = [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { ...metadata, annotations: { ...annotations, [`${ANN}size`]: s.size } },
      spec: {
        ...(hpa ? {} : { replicas: s.replicaMin }),
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [container] } },
      },
    },
  ];
  if (s.port !== null) {
    items.push({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: app.slug, namespace: at.namespace, labels },
      spec: { selector: labels, ports: [{ port: 80, targetPort: s.port }] },
    });
    const backend = { service: { name: app.slug, port: { number: 80 } } };
    items.push({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: app.slug, namespace: at.namespace, labels },
      spec: { rules: [{ host: at.host, http: { paths: [{ path: "/", pathType: "Prefix", backend }] } }] },
    });
  }
  if (hpa) {
    const target = { type: "Utilization", averageUtilization: s.targetCpuPercent ?? 70 };
    items.push({
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: app.slug, namespace: at.namespace, labels },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: app.slug },
        minReplicas: s.replicaMin,
        maxReplicas: s.replicaMax,
        metrics: [{ type: "Resource", resource: { name: "cpu", target } }],
      },
    });
  }
  return { apiVersion: "v1", kind: "List", items };
}

/** The file as committed: two-space JSON with a final newline. */
export const render = (m: unknown) => `${JSON.stringify(m, null, 2)}\n`;

/** JSON with sorted keys, so a file someone reformatted or reordered still compares equal. */
export function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(",")}]`;
  if (v && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((v as Json)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v);
}

/** True when the file's text is the same manifest (formatting and key order aside). */
export function sameManifest(text: string, m: unknown): boolean {
  try {
    return stable(JSON.parse(text)) === stable(m);
  } catch {
    return false;
  }
}

const obj = (v: unknown): Json | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : null);

function count(v: unknown, what: string, fallback: number): number {
  if (v === undefined || v === null) return fallback;
  if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > 1000)
    throw new ManifestError(`${what} must be a whole number from 1 to 1000, not ${JSON.stringify(v)}.`);
  return v as number;
}

/** What a committed manifest asks of an app of that kind; ManifestError says what is wrong with it. */
export function parseManifest(kind: AppKind, text: string): Desired {
  let doc: Json | null;
  try {
    doc = obj(JSON.parse(text));
  } catch (err) {
    throw new ManifestError(`The manifest is not valid JSON (${(err as Error).message}).`);
  }
  if (!doc) throw new ManifestError("The manifest is not a JSON object.");
  if (kind === "site") {
    const id = obj(doc.spec)?.deploymentId;
    if (doc.kind !== "StaticSite" || typeof id !== "string" || !id)
      throw new ManifestError("A static site's manifest is a StaticSite with spec.deploymentId.");
    return { kind, deploymentId: id };
  }
  const items = Array.isArray(doc.items) ? doc.items.map(obj) : doc.kind === "Deployment" ? [doc] : [];
  const deployment = items.find((i) => i?.kind === "Deployment");
  const spec = obj(deployment?.spec);
  const containers = obj(obj(spec?.template)?.spec)?.containers;
  const image = Array.isArray(containers) ? obj(containers[0])?.image : undefined;
  if (!spec || typeof image !== "string" || !image.trim())
    throw new ManifestError("The manifest has no Deployment with spec.template.spec.containers[0].image.");
  const hpa = obj(items.find((i) => i?.kind === "HorizontalPodAutoscaler")?.spec);
  if (hpa) {
    const min = count(hpa.minReplicas, "minReplicas", 1);
    const max = count(hpa.maxReplicas, "maxReplicas", min);
    if (max < min) throw new ManifestError(`maxReplicas (${max}) is below minReplicas (${min}).`);
    return { kind, image: image.trim(), replicaMin: min, replicaMax: max };
  }
  const replicas = count(spec.replicas, "spec.replicas", 1);
  return { kind, image: image.trim(), replicaMin: replicas, replicaMax: replicas };
}
