import { generateKeyPair, randomBytes, sign, type KeyObject } from "node:crypto";
import { promisify } from "node:util";

/**
 * The registry's token signing key and its self-signed certificate, built with node's crypto and a
 * minimal DER writer (no openssl CLI needed on API hosts). The registry trusts the certificate
 * (`auth.token.rootcertbundle`); every token carries it in its `x5c` header, and distribution checks
 * that chain against the bundle before it checks the RS256 signature with the certificate's key.
 */

const tlv = (tag: number, content: Buffer): Buffer => {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, content]);
};
const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const explicit = (n: number, content: Buffer) => tlv(0xa0 | n, content);
const nul = () => Buffer.from([0x05, 0x00]);
const bool = (v: boolean) => Buffer.from([0x01, 0x01, v ? 0xff : 0x00]);
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), b]));
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, "utf8"));

/** A non-negative INTEGER from big-endian bytes (a leading zero keeps the sign bit clear). */
const integer = (b: Buffer) => {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0 && b[i + 1] < 0x80) i++;
  const v = b.subarray(i);
  return tlv(0x02, v[0] >= 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v);
};

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const out = [40 * a + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, "").slice(0, 14) + "Z"; // YYYYMMDDHHMMSSZ
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
}

const SHA256_WITH_RSA = seq(oid("1.2.840.113549.1.1.11"), nul());
const name = (cn: string) => seq(set(seq(oid("2.5.4.3"), utf8(cn))));

/** A self-signed X.509 v3 certificate (CA, so the registry's bundle is its own root) for the key pair. */
export function selfSignedCertificate(
  privateKey: KeyObject,
  publicKey: KeyObject,
  opts: { commonName: string; notBefore: Date; notAfter: Date },
): Buffer {
  const serial = randomBytes(16);
  serial[0] &= 0x7f;
  const basicConstraints = seq(oid("2.5.29.19"), bool(true), octets(seq(bool(true))));
  // digitalSignature + keyCertSign
  const keyUsage = seq(oid("2.5.29.15"), bool(true), octets(tlv(0x03, Buffer.from([0x02, 0x84]))));
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    SHA256_WITH_RSA,
    name(opts.commonName),
    seq(time(opts.notBefore), time(opts.notAfter)),
    name(opts.commonName),
    publicKey.export({ type: "spki", format: "der" }),
    explicit(3, seq(basicConstraints, keyUsage)),
  );
  return seq(tbs, SHA256_WITH_RSA, bits(sign("sha256", tbs, privateKey)));
}

const generate = promisify(generateKeyPair);

/** A fresh RSA key (PKCS#8 PEM) and its self-signed certificate (DER, base64) valid for ten years. */
export async function newSigningKey(commonName: string): Promise<{ privateKeyPem: string; certificate: string }> {
  const { privateKey, publicKey } = await generate("rsa", { modulusLength: 2048 });
  const now = Date.now();
  const der = selfSignedCertificate(privateKey, publicKey, {
    commonName,
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now + 10 * 365 * 86_400_000),
  });
  return {
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    certificate: der.toString("base64"),
  };
}

/** The certificate as the registry's rootcertbundle file holds it. */
export function certificatePem(base64Der: string): string {
  const lines = base64Der.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}
