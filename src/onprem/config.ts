import { ConfigError, httpUrl, int } from "../config/config.js";
import type { KeyObject } from "node:crypto";
import { checkInstallationLicense, type InstalledLicense } from "./installation.js";
import { parsePrivateKey } from "./license.js";

type Env = Record<string, string | undefined>;

/** The on-premises licensing area's settings (README: src/onprem/README.md). */
export interface OnpremConfig {
  /** ONPREM_PRICE_PER_HOST_MONTH_KRW: the price of one host for one month, won */
  pricePerHostMonthKrw: number;
  /** ONPREM_ALLOWED_MONTHS: the terms an order may buy */
  allowedMonths: number[];
  /** ONPREM_MAX_HOSTS: the most hosts one order may license */
  maxHosts: number;
  /** ONPREM_TRIAL_DAYS / ONPREM_TRIAL_HOSTS: what the one trial per owner grants */
  trialDays: number;
  trialHosts: number;
  /** ONPREM_TERMS_VERSION / ONPREM_TERMS_URL: the current terms and where they are published */
  termsVersion: string;
  termsUrl: string;
  /** ONPREM_SIGNING_KEY: the platform's Ed25519 signing key (PEM or base64 PKCS#8); null: generated in DATA_DIR */
  signingKey: KeyObject | null;
  /** ONPREM_RELEASES_DIR: where published bundles are kept; null: $DATA_DIR/onprem-releases */
  releasesDir: string | null;
  /** ONPREM_DOWNLOAD_BASE_URL: the address download links start with; null: the address the request came to */
  downloadBaseUrl: string | null;
  /** EDITION=onprem with LICENSE_FILE: this installation's own license, verified (a bad one stops start-up) */
  installation: InstalledLicense | null;
}

const VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,39}$/;

function months(env: Env): number[] {
  const raw = env.ONPREM_ALLOWED_MONTHS;
  if (raw === undefined || raw === "") return [1, 3, 6, 12];
  const list = raw.split(",").map((s) => s.trim());
  if (!list.every((s) => /^\d{1,3}$/.test(s) && Number(s) >= 1 && Number(s) <= 120))
    throw new ConfigError("ONPREM_ALLOWED_MONTHS", `must be a comma-separated list of months 1-120, got "${raw}"`);
  return [...new Set(list.map(Number))].sort((a, b) => a - b);
}

export function onpremConfig(env: Env): OnpremConfig {
  const termsVersion = env.ONPREM_TERMS_VERSION || "2026-11-01";
  if (!VERSION.test(termsVersion))
    throw new ConfigError("ONPREM_TERMS_VERSION", "must be 1-40 letters, digits, dots, hyphens, + or _");
  const base = env.BASE_DOMAIN || "localhost";
  return {
    pricePerHostMonthKrw: int(env, "ONPREM_PRICE_PER_HOST_MONTH_KRW", 300_000, 1, 1_000_000_000),
    allowedMonths: months(env),
    maxHosts: int(env, "ONPREM_MAX_HOSTS", 1000, 1, 100_000),
    trialDays: int(env, "ONPREM_TRIAL_DAYS", 30, 1, 365),
    trialHosts: int(env, "ONPREM_TRIAL_HOSTS", 3, 1, 100_000),
    termsVersion,
    termsUrl: httpUrl(env, "ONPREM_TERMS_URL") ?? `https://${base}/onprem/terms/${termsVersion}`,
    signingKey: env.ONPREM_SIGNING_KEY ? parsePrivateKey(env.ONPREM_SIGNING_KEY, "ONPREM_SIGNING_KEY") : null,
    releasesDir: env.ONPREM_RELEASES_DIR || null,
    downloadBaseUrl: httpUrl(env, "ONPREM_DOWNLOAD_BASE_URL"),
    installation: env.EDITION === "onprem" ? checkInstallationLicense(env) : null,
  };
}

export { VERSION };
