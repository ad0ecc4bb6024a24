import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;

export const FULL_TOKEN_PREFIX = "op_u_";
export const SCOPED_KEY_PREFIX = "opk_";

/** 32 random bytes: high enough entropy that a fast hash is the right way to store it. */
export function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString("base64url");
}

export function hashSecret(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

/** Constant-time comparison of two secrets of any length. */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(hashSecret(a), hashSecret(b));
}

const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString("base64")}$${key.toString("base64")}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  // hash something even without a stored hash, so timing does not tell which e-mails exist
  const parts = (stored ?? "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAA").split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [, n, r, p, salt, key] = parts;
  const expected = Buffer.from(key, "base64");
  const actual = await scrypt(password, Buffer.from(salt, "base64"), expected.length || 32, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return stored !== null && expected.length === actual.length && timingSafeEqual(expected, actual);
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}
