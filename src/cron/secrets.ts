import { createHmac } from "node:crypto";
import type { SecretBox } from "../kernel/secrets.js";
import type { Principal } from "../auth/principal.js";
import type { SecretMeta } from "../apps/public.js";

/**
 * Secret env of cron jobs (issue 29), as pods have it: values sealed at rest under the platform key, never
 * returned (only a fingerprint, who set it and when), masked in run logs and so in failure mails. A job made
 * from a pod (`pod`) takes that pod's current release: its image, plain env and secrets, snapshotted when the
 * job is created or given `pod` again (a later release of the pod is not followed by itself, as before). The
 * job's own `env` and `secret_env` win over the release's values of the same name.
 */
export const SECRET_COLUMN = "cron_jobs.secret_env";
export const RELEASE_COLUMN = "cron_jobs.release_env";

export interface SecretDoc {
  values: Record<string, string>;
  meta: Record<string, SecretMeta>;
}
/** what a job took from its pod's release */
export interface ReleaseEnv {
  env: Record<string, string>;
  secret: Record<string, string>;
  meta: Record<string, SecretMeta>;
}

export const openSecrets = (box: SecretBox, sealed: string | null): SecretDoc =>
  sealed ? (JSON.parse(box.open(sealed, SECRET_COLUMN)) as SecretDoc) : { values: {}, meta: {} };

export const sealSecrets = (box: SecretBox, doc: SecretDoc): string | null =>
  Object.keys(doc.values).length ? box.seal(JSON.stringify(doc), SECRET_COLUMN) : null;

export const openRelease = (box: SecretBox, sealed: string | null): ReleaseEnv =>
  sealed ? (JSON.parse(box.open(sealed, RELEASE_COLUMN)) as ReleaseEnv) : { env: {}, secret: {}, meta: {} };

export const sealRelease = (box: SecretBox, r: ReleaseEnv): string => box.seal(JSON.stringify(r), RELEASE_COLUMN);

const fingerprintOf = (box: SecretBox, value: string) =>
  "hmac-sha256:" + createHmac("sha256", box.derive("cron-secret-fingerprint")).update(value).digest("hex").slice(0, 32);

const setterOf = (p: Principal): string =>
  p.account?.email ? `${p.account.email} (${p.kind === "full" ? "session or full key" : "scoped key"})` : "platform";

/** given names are set (null removes one); others stay; the same value again keeps who set it and when */
export function applySecrets(
  box: SecretBox,
  cur: SecretDoc,
  change: Record<string, string | null>,
  p: Principal,
): SecretDoc {
  const next: SecretDoc = { values: { ...cur.values }, meta: { ...cur.meta } };
  const now = new Date().toISOString();
  for (const [k, v] of Object.entries(change)) {
    if (v === null) {
      delete next.values[k];
      delete next.meta[k];
      continue;
    }
    if (next.values[k] !== v || !next.meta[k])
      next.meta[k] = { fingerprint: fingerprintOf(box, v), set_by: setterOf(p), set_at: now };
    next.values[k] = v;
  }
  return next;
}
