/**
 * Signed license documents (README: src/onprem/README.md, "Licenses"). A license file is
 * `{"license": {...}, "signature": "<base64>", "key_id": "<hex>"}`; the signature is Ed25519 over the canonical
 * JSON of `license` (object keys sorted at every level, no whitespace), so an installation verifies it offline with
 * the platform's public key (`GET /v1/onprem/license-key`).
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ConfigError } from "../config/config.js";
import type { Owner } from "../kernel/owner.js";

export interface LicenseBody {
  license_id: string;
  customer: string;
  owner: { kind: Owner["kind"]; id: string };
  hosts: number;
  not_before: string;
  not_after: string;
  features: string[];
  issued_at: string;
}

export interface LicenseFile {
  license: LicenseBody;
  signature: string;
  key_id: string;
}

export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  keyId: string;
  /** the file it was read from or generated into; null when configured */
  file: string | null;
}

/** JSON with object keys sorted at every level and no whitespace: the bytes a signature covers. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new Error("canonical JSON has no NaN or Infinity");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/** The first 16 hex digits of the SHA-256 of the public key (SubjectPublicKeyInfo, DER). */
export const keyIdOf = (publicKey: KeyObject): string =>
  createHash("sha256")
    .update(publicKey.export({ type: "spki", format: "der" }))
    .digest("hex")
    .slice(0, 16);

/** How each half of an Ed25519 key pair is read: PEM, or base64 DER in its standard container. */
const KEY_FORMS = {
  private: {
    what: "PKCS#8 private key",
    read: (text: string, der: Buffer | null) =>
      der ? createPrivateKey({ key: der, format: "der", type: "pkcs8" }) : createPrivateKey(text),
  },
  public: {
    what: "SubjectPublicKeyInfo public key",
    read: (text: string, der: Buffer | null) =>
      der ? createPublicKey({ key: der, format: "der", type: "spki" }) : createPublicKey(text),
  },
};

function parseEd25519Key(raw: string, name: string, form: keyof typeof KEY_FORMS): KeyObject {
  const { what, read } = KEY_FORMS[form];
  let key: KeyObject;
  try {
    const text = raw.trim();
    key = read(text, text.startsWith("-----BEGIN") ? null : Buffer.from(text, "base64"));
  } catch {
    throw new ConfigError(name, `is not a PEM or base64 ${what}`);
  }
  if (key.asymmetricKeyType !== "ed25519") throw new ConfigError(name, "must be an Ed25519 key");
  return key;
}

/** An Ed25519 private key from PEM or base64 PKCS#8 DER; a bad one is a ConfigError naming `name`. */
export const parsePrivateKey = (raw: string, name: string): KeyObject => parseEd25519Key(raw, name, "private");

/** An Ed25519 public key from PEM or base64 SubjectPublicKeyInfo DER; a bad one is a ConfigError naming `name`. */
export const parsePublicKey = (raw: string, name: string): KeyObject => parseEd25519Key(raw, name, "public");

/**
 * The platform's signing key: ONPREM_SIGNING_KEY, or the one generated at first start into
 * `$DATA_DIR/onprem-signing-key.pem` (0600). Several API hosts must share one (configure it), or their licenses
 * would verify with different public keys.
 */
export async function loadSigningKey(configured: KeyObject | null, dataDir: string): Promise<SigningKey> {
  if (configured) {
    const privateKey = configured;
    const publicKey = createPublicKey(privateKey);
    return { privateKey, publicKey, keyId: keyIdOf(publicKey), file: null };
  }
  const file = path.join(dataDir, "onprem-signing-key.pem");
  if (!existsSync(file)) {
    await mkdir(dataDir, { recursive: true });
    const pem = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }) as string;
    await writeFile(file, pem, { mode: 0o600, flag: "wx" }).catch((err) => {
      if ((err as { code?: string }).code !== "EEXIST") throw err;
    });
  }
  await chmod(file, 0o600);
  const privateKey = parsePrivateKey(await readFile(file, "utf8"), file);
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, keyId: keyIdOf(publicKey), file };
}

/** Signs a license body; the result is the license file. */
export function signLicense(key: SigningKey, license: LicenseBody): LicenseFile {
  const signature = sign(null, Buffer.from(canonicalJson(license)), key.privateKey).toString("base64");
  return { license, signature, key_id: key.keyId };
}

/** The text a license file is stored and served as. */
export const licenseText = (file: LicenseFile): string => JSON.stringify(file, null, 2) + "\n";

export type Verification =
  { ok: true; license: LicenseBody; valid: boolean; problem: string | null } | { ok: false; problem: string };

const isString = (v: unknown): v is string => typeof v === "string" && v.length > 0;

function wellFormed(l: unknown): l is LicenseBody {
  const x = l as Partial<LicenseBody> | null;
  return (
    !!x &&
    typeof x === "object" &&
    isString(x.license_id) &&
    isString(x.customer) &&
    !!x.owner &&
    isString(x.owner.kind) &&
    isString(x.owner.id) &&
    Number.isSafeInteger(x.hosts) &&
    (x.hosts as number) > 0 &&
    isString(x.not_before) &&
    !Number.isNaN(Date.parse(x.not_before)) &&
    isString(x.not_after) &&
    !Number.isNaN(Date.parse(x.not_after)) &&
    Array.isArray(x.features) &&
    x.features.every(isString) &&
    isString(x.issued_at)
  );
}

/**
 * Verifies a license file (its text or parsed JSON) against a public key: the signature first (a file that does not
 * verify is `ok: false`), then its dates at `now` (`valid`; `problem` says why not).
 */
export function verifyLicense(file: unknown, publicKey: KeyObject, now = new Date()): Verification {
  let parsed = file;
  if (typeof file === "string") {
    try {
      parsed = JSON.parse(file);
    } catch {
      return { ok: false, problem: "is not JSON" };
    }
  }
  const f = parsed as Partial<LicenseFile> | null;
  if (!f || typeof f !== "object" || !isString(f.signature) || !wellFormed(f.license))
    return { ok: false, problem: "is not a license file ({license, signature, key_id})" };
  if (f.key_id !== undefined && f.key_id !== keyIdOf(publicKey))
    return {
      ok: false,
      problem: `was signed by key ${String(f.key_id)}, not by the given public key ${keyIdOf(publicKey)}`,
    };
  const good = verify(null, Buffer.from(canonicalJson(f.license)), publicKey, Buffer.from(f.signature, "base64"));
  if (!good) return { ok: false, problem: "has a signature that does not verify (the license was altered)" };
  const l = f.license;
  if (now.getTime() < Date.parse(l.not_before))
    return { ok: true, license: l, valid: false, problem: `is not valid before ${l.not_before}` };
  if (now.getTime() >= Date.parse(l.not_after))
    return { ok: true, license: l, valid: false, problem: `expired at ${l.not_after}` };
  return { ok: true, license: l, valid: true, problem: null };
}
