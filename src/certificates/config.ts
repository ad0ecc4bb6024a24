import { ConfigError, int, url } from "../config/config.js";

/** The certificates area's settings (README.md here); with none set ACME is off and nothing is issued. */
export interface CertificatesConfig {
  /** ACME_DIRECTORY_URL: the ACME server's directory; null: ACME off (requests are recorded, nothing is issued) */
  directoryUrl: string | null;
  /** ACME_EMAIL: the account's contact (expiry notices from the CA) */
  email: string | null;
  /** ACME_CA_FILE: a PEM file of extra CAs to trust for the directory (pebble's in tests) */
  caFile: string | null;
  /** ACME_RENEW_DAYS (30): a certificate expiring within this many days is renewed */
  renewDays: number;
}

type Env = Record<string, string | undefined>;

export function certificatesConfig(env: Env): CertificatesConfig {
  const acmeDirectory = url(env, "ACME_DIRECTORY_URL", ["http:", "https:"]);
  const directoryUrl = acmeDirectory && new URL(acmeDirectory).toString();
  const email = env.ACME_EMAIL || null;
  if (email && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    throw new ConfigError("ACME_EMAIL", `is not an e-mail address: "${email}"`);
  return {
    directoryUrl,
    email,
    caFile: env.ACME_CA_FILE || null,
    renewDays: int(env, "ACME_RENEW_DAYS", 30, 1, 365),
  };
}

const NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;

/**
 * The host name a certificate can be asked for: a DNS name of at least two labels, lower case, no trailing dot,
 * not an IP address, no wildcard (HTTP-01 cannot prove one); null otherwise.
 */
export function certificateHost(host: string): string | null {
  const name = host.trim().toLowerCase().replace(/\.$/, "");
  if (!NAME.test(name) || /^[\d.]+$/.test(name)) return null;
  return name;
}
