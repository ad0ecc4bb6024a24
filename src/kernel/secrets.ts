import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ConfigError } from "../config/config.js";
import type { Queryable } from "../store/db.js";
import { recordSecretKey, secretKeyIds } from "./secrets-repo.js";

const PREFIX = "enc:v1:";

/**
 * Secrets at rest (initial database passwords, payment provider references, registry and bucket
 * secrets): AES-256-GCM under one platform key, as `enc:v1:<key id>:<iv>:<tag>:<ciphertext>` (base64url).
 * The column's name is the associated data, so a ciphertext copied into another column does not open.
 *
 * The key: PLATFORM_SECRET_KEY (32 bytes, base64 or hex), or generated at first start into
 * `$DATA_DIR/platform-key` (0600). Rotation: give the new key as PLATFORM_SECRET_KEY and the old one in
 * PLATFORM_SECRET_KEYS_RETIRED (comma-separated); old ciphertexts still open, and `needsReseal` tells
 * the areas' re-seal jobs which rows to write again under the new key; then drop the retired key.
 * Several hosts over one store must share the key: start-up refuses a key the store has never seen
 * while it holds secrets sealed by another (table `secret_keys`).
 */
export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  readonly currentKeyId: string;

  constructor(current: Buffer, retired: Buffer[] = []) {
    this.currentKeyId = keyId(current);
    for (const k of [current, ...retired]) this.keys.set(keyId(k), k);
  }

  seal(plaintext: string, column: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.keys.get(this.currentKeyId)!, iv);
    cipher.setAAD(Buffer.from(column));
    const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return `${PREFIX}${this.currentKeyId}:${iv.toString("base64url")}:${cipher.getAuthTag().toString("base64url")}:${ct.toString("base64url")}`;
  }

  /** Values written before encryption existed are plaintext and come back as they are. */
  open(stored: string, column: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    const [kid, iv, tag, ct] = stored.slice(PREFIX.length).split(":");
    const key = this.keys.get(kid);
    if (!key)
      throw new Error(`secret sealed with unknown key ${kid}; set PLATFORM_SECRET_KEY or PLATFORM_SECRET_KEYS_RETIRED`);
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(column));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
  }

  /**
   * A key of its own for one purpose (signing download addresses, ...), derived from the current platform key
   * (HMAC-SHA256 of the purpose): the same on every host sharing the key, never the key itself.
   */
  derive(purpose: string): Buffer {
    return createHmac("sha256", this.keys.get(this.currentKeyId)!).update(`derive:${purpose}`).digest();
  }

  openNullable(stored: string | null, column: string): string | null {
    return stored === null ? null : this.open(stored, column);
  }

  canOpen(kid: string): boolean {
    return this.keys.has(kid);
  }

  /** Plaintext or sealed under a retired key: write it again. */
  needsReseal(stored: string | null): boolean {
    return stored !== null && !stored.startsWith(`${PREFIX}${this.currentKeyId}:`);
  }
}

const keyId = (key: Buffer) => createHash("sha256").update(key).digest("hex").slice(0, 12);

function parseKey(name: string, raw: string): Buffer {
  const text = raw.trim();
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, "hex") : Buffer.from(text, "base64");
  if (key.length !== 32) throw new ConfigError(name, "must be 32 bytes, base64 or hex encoded");
  return key;
}

/** The platform key from the environment, or the one generated at first start in the data directory. */
export async function loadSecretBox(
  env: Record<string, string | undefined>,
  dataDir: string,
): Promise<{ box: SecretBox; file: string | null }> {
  const retired = (env.PLATFORM_SECRET_KEYS_RETIRED ?? "")
    .split(",")
    .filter((s) => s.trim())
    .map((s) => parseKey("PLATFORM_SECRET_KEYS_RETIRED", s));
  if (env.PLATFORM_SECRET_KEY)
    return { box: new SecretBox(parseKey("PLATFORM_SECRET_KEY", env.PLATFORM_SECRET_KEY), retired), file: null };
  const file = path.join(dataDir, "platform-key");
  if (!existsSync(file)) {
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, randomBytes(32).toString("base64") + "\n", { mode: 0o600, flag: "wx" }).catch((err) => {
      if ((err as { code?: string }).code !== "EEXIST") throw err;
    });
  }
  await chmod(file, 0o600);
  return { box: new SecretBox(parseKey(file, await readFile(file, "utf8")), retired), file };
}

/**
 * Records this key in the store; refuses a key the store does not know when it already holds secrets
 * sealed by another, so a second host with its own generated key cannot write secrets no one else opens.
 */
export async function registerSecretKey(q: Queryable, box: SecretBox): Promise<void> {
  const known = await secretKeyIds(q);
  if (known.length && !known.some((k) => box.canOpen(k))) {
    throw new ConfigError(
      "PLATFORM_SECRET_KEY",
      `does not match the key this store's secrets are sealed with (${known.join(", ")}); give every host the same key`,
    );
  }
  await recordSecretKey(q, box.currentKeyId);
}

/**
 * Masks secret values in text shown back (pods' logs and exec output, build logs, cron runs' logs). Values
 * shorter than 4 characters are left alone: masking every "1" or "on" would garble logs and hide nothing worth
 * hiding. The longest first, so a value inside another does not split it.
 */
export function maskSecrets(text: string, secret: Record<string, string>): string {
  const values = Object.entries(secret)
    .filter(([, v]) => v.length >= 4)
    .sort((a, b) => b[1].length - a[1].length);
  let out = text;
  for (const [name, value] of values) out = out.split(value).join(`[secret ${name}]`);
  return out;
}
