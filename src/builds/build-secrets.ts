import { createHmac } from "node:crypto";
import type { SecretBox } from "../kernel/secrets.js";

/**
 * Build-time values (issue 29), kept apart from a pod's runtime env: a build gets only what its own request
 * gave. `build_args` are plain (`buildah --build-arg`, shown back by the API, visible in the image's history as
 * Docker's are); `build_secrets` are sealed at rest under the platform key, handed to buildah as `--secret
 * id=NAME,src=FILE` (mounted for `RUN --mount=type=secret,id=NAME`, never stored in a layer), shown back only as
 * fingerprints and masked in the build log. A build never sees an app's runtime secrets: a Dockerfile that needs
 * one is given it again as a build secret (Render and Fly do the same: build secrets are declared per build).
 * A rebuild (base-image refresh) reuses the secrets of the build it repeats.
 */
export const BUILD_SECRETS_COLUMN = "builds.build_secrets_sealed";

export interface BuildSecrets {
  sealed: string | null;
  meta: Record<string, { fingerprint: string }>;
}

/** HMAC-SHA256 under a key derived from the platform key: tells values apart, cannot be guessed offline */
export const buildSecretFingerprint = (box: SecretBox, value: string): string =>
  "hmac-sha256:" +
  createHmac("sha256", box.derive("build-secret-fingerprint")).update(value).digest("hex").slice(0, 32);

export function sealBuildSecrets(box: SecretBox, secrets: Record<string, string> | undefined): BuildSecrets {
  const names = Object.keys(secrets ?? {});
  if (!names.length) return { sealed: null, meta: {} };
  const meta: BuildSecrets["meta"] = {};
  for (const n of names) meta[n] = { fingerprint: buildSecretFingerprint(box, secrets![n]) };
  return { sealed: box.seal(JSON.stringify(secrets), BUILD_SECRETS_COLUMN), meta };
}

export const openBuildSecrets = (box: SecretBox, sealed: string | null): Record<string, string> =>
  sealed ? (JSON.parse(box.open(sealed, BUILD_SECRETS_COLUMN)) as Record<string, string>) : {};

/** the longest value masked: output is held back by one less than this, so a value split across chunks is caught */
export const longestMasked = (secrets: Record<string, string>): number =>
  Math.max(
    0,
    ...Object.values(secrets)
      .filter((v) => v.length >= 4)
      .map((v) => v.length),
  );
