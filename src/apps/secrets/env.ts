import { createHmac } from "node:crypto";
import { ApiError } from "../../http/errors.js";
import type { Principal } from "../../auth/principal.js";
import { maskSecrets, type SecretBox } from "../../kernel/secrets.js";
import { ENV_COLUMN } from "../container-spec.js";

/**
 * Secret env values (issue 29). A pod's, group's or template's env stays one sealed JSON document
 * (`env_sealed`, AES-GCM under the platform key); secret names are marked in it under the reserved key
 * `$secrets` (env names cannot start with `$`), with who set each and when. Containers get every value;
 * the API shows plain values as before and, for secrets, only `{fingerprint, set_by, set_at}`.
 * No migration: old documents simply have no secrets.
 */
export const SECRET_META_KEY = "$secrets";

export interface SecretMeta {
  /** HMAC-SHA256 of the value under a key derived from the platform key: compares values, cannot be guessed offline */
  fingerprint: string;
  /** the account that set it (e-mail) and its token kind */
  set_by: string;
  set_at: string;
}

export interface EnvDoc {
  plain: Record<string, string>;
  secret: Record<string, string>;
  meta: Record<string, SecretMeta>;
}

/** what a request may change: `env` replaces the plain values, `secret_env` sets (or with null removes) secrets */
export interface EnvChange {
  env?: Record<string, string>;
  secret_env?: Record<string, string | null>;
}

export const emptyEnvDoc = (): EnvDoc => ({ plain: {}, secret: {}, meta: {} });

/** The sealed env of something new (a pod, a group): its env and secrets as given, set by the caller. */
export const sealNewEnv = (
  box: SecretBox,
  input: { env?: Record<string, string>; secret_env?: Record<string, string | null> },
  p: Principal,
  inherited?: Pick<EnvDoc, "secret" | "meta">,
): string =>
  sealEnvDoc(
    box,
    applyEnvChange(box, emptyEnvDoc(), { env: input.env ?? {}, secret_env: input.secret_env }, setterOf(p), inherited),
  );

export function readEnvDoc(box: SecretBox, sealed: string | null | undefined): EnvDoc {
  if (!sealed) return emptyEnvDoc();
  const all = JSON.parse(box.open(sealed, ENV_COLUMN)) as Record<string, unknown>;
  const meta = (all[SECRET_META_KEY] ?? {}) as Record<string, SecretMeta>;
  const doc = emptyEnvDoc();
  doc.meta = meta;
  for (const [k, v] of Object.entries(all)) {
    if (k === SECRET_META_KEY) continue;
    if (k in meta) doc.secret[k] = v as string;
    else doc.plain[k] = v as string;
  }
  return doc;
}

export function sealEnvDoc(box: SecretBox, doc: EnvDoc): string {
  const all: Record<string, unknown> = { ...doc.plain, ...doc.secret };
  if (Object.keys(doc.meta).length) all[SECRET_META_KEY] = doc.meta;
  return box.seal(JSON.stringify(all), ENV_COLUMN);
}

export function fingerprintOf(box: SecretBox, value: string): string {
  return (
    "hmac-sha256:" + createHmac("sha256", box.derive("env-secret-fingerprint")).update(value).digest("hex").slice(0, 32)
  );
}

export const setterOf = (p: Principal): string =>
  p.account?.email
    ? `${p.account.email} (${p.kind === "full" ? "session or full key" : "scoped key"} ${p.tokenId.slice(0, 8)})`
    : "platform";

/**
 * The document after a change. A name is plain or secret, never both: giving one name in both, or a
 * secret's name in plain `env`, is refused (remove the secret first with `secret_env: {NAME: null}`).
 * `inherited` carries secrets copied from a group or template with their own fingerprints and setters.
 */
export function applyEnvChange(
  box: SecretBox,
  cur: EnvDoc,
  change: EnvChange,
  setBy: string,
  inherited?: Pick<EnvDoc, "secret" | "meta">,
): EnvDoc {
  const next: EnvDoc = { plain: { ...cur.plain }, secret: { ...cur.secret }, meta: { ...cur.meta } };
  if (inherited)
    for (const [k, v] of Object.entries(inherited.secret)) {
      next.secret[k] = v;
      next.meta[k] = inherited.meta[k];
    }
  const secretNames = Object.keys(change.secret_env ?? {});
  const both = Object.keys(change.env ?? {}).filter((k) => secretNames.includes(k));
  if (both.length)
    throw new ApiError(
      "invalid_request",
      `${both.join(", ")} given both in env and in secret_env; a value is one or the other.`,
    );
  const now = new Date().toISOString();
  for (const [k, v] of Object.entries(change.secret_env ?? {})) {
    if (v === null) {
      delete next.secret[k];
      delete next.meta[k];
      continue;
    }
    // the same value again (a rollback, a group's rollout) keeps who set it and when
    if (next.secret[k] !== v || !next.meta[k])
      next.meta[k] = { fingerprint: fingerprintOf(box, v), set_by: setBy, set_at: now };
    next.secret[k] = v;
    delete next.plain[k];
  }
  if (change.env !== undefined) {
    const clash = Object.keys(change.env).filter((k) => k in next.secret);
    if (clash.length)
      throw new ApiError(
        "invalid_request",
        `${clash.join(", ")} is a secret; change it through secret_env (or remove it with secret_env {"${clash[0]}": null} first).`,
      );
    next.plain = { ...change.env };
  }
  return next;
}

/**
 * The `secret_env` of a change that makes a resource's secrets exactly `target` (a release rolled back to, a
 * group's spec reaching a member): every target value, and null for each secret the resource has beyond them.
 */
export function secretsPatchTo(
  box: SecretBox,
  curSealed: string,
  target: Record<string, string>,
): Record<string, string | null> {
  const patch: Record<string, string | null> = { ...target };
  for (const k of Object.keys(readEnvDoc(box, curSealed).secret)) if (!(k in target)) patch[k] = null;
  return patch;
}

export const secretEnvView = (doc: EnvDoc): Record<string, SecretMeta> => doc.meta;

/**
 * Masks the secrets of a pod's sealed env in text the platform stores from its replicas (check failure reasons,
 * a rollback's last log lines). Without a box (tests building the reconciler bare) the text stays as it is.
 */
export function maskPodSecrets(box: SecretBox | undefined, sealed: string | null | undefined, text: string): string {
  if (!box || !sealed) return text;
  return maskSecrets(text, readEnvDoc(box, sealed).secret);
}
