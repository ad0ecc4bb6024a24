/**
 * The on-premises edition's own license: with EDITION=onprem and LICENSE_FILE, start-up reads the file and verifies
 * it with the vendor's public key (ONPREM_LICENSE_PUBLIC_KEY); a file that is missing, altered, signed by another
 * key, not yet valid or expired stops start-up with one line naming LICENSE_FILE (exit code 2), like any bad setting.
 */
import { readFileSync } from "node:fs";
import { ConfigError } from "../config/config.js";
import { parsePublicKey, verifyLicense, type LicenseBody } from "./license.js";

type Env = Record<string, string | undefined>;

export interface InstalledLicense {
  license: LicenseBody;
  path: string;
}

/** The public key's value: PEM or base64 DER text, or the path of a file holding it. */
function publicKeyText(raw: string): string {
  if (!raw.startsWith("/") && !raw.startsWith("./")) return raw;
  try {
    return readFileSync(raw, "utf8");
  } catch (err) {
    throw new ConfigError("ONPREM_LICENSE_PUBLIC_KEY", `file ${raw} cannot be read: ${(err as Error).message}`);
  }
}

export function checkInstallationLicense(env: Env, now = new Date()): InstalledLicense | null {
  const file = env.LICENSE_FILE;
  if (!file) return null;
  const rawKey = env.ONPREM_LICENSE_PUBLIC_KEY;
  if (!rawKey)
    throw new ConfigError(
      "ONPREM_LICENSE_PUBLIC_KEY",
      "is required with LICENSE_FILE: the vendor's license public key (GET /v1/onprem/license-key of the vendor's platform)",
    );
  const key = parsePublicKey(publicKeyText(rawKey), "ONPREM_LICENSE_PUBLIC_KEY");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError("LICENSE_FILE", `${file} cannot be read: ${(err as Error).message}`);
  }
  const v = verifyLicense(text, key, now);
  if (!v.ok)
    throw new ConfigError("LICENSE_FILE", `${file} ${v.problem}; the platform does not start without a valid license`);
  if (!v.valid)
    throw new ConfigError(
      "LICENSE_FILE",
      `${file}: license ${v.license.license_id} (${v.license.customer}) ${v.problem}; install a renewed license`,
    );
  return { license: v.license, path: file };
}

/** What /v1/edition shows of it; `valid` is computed at each call. */
export function editionView(installed: InstalledLicense) {
  return () => {
    const l = installed.license;
    const now = Date.now();
    return {
      license_id: l.license_id,
      customer: l.customer,
      hosts: l.hosts,
      not_after: new Date(l.not_after).toISOString(),
      valid: now >= Date.parse(l.not_before) && now < Date.parse(l.not_after),
    };
  };
}
