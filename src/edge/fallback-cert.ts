import { KeyObject, X509Certificate, randomBytes, webcrypto } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";

export interface PemPair {
  certPem: string;
  keyPem: string;
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
const VALID_DAYS = 365;
/** a fallback closer to its end than this is made again at start */
const RENEW_DAYS = 30;

/**
 * The certificate the HTTPS listener shows when it has none for a name: before ACME issued one (or with ACME
 * off), and to clients sending no SNI. Self-signed (browsers warn), for `<APPS_DOMAIN>`, `*.<APPS_DOMAIN>` and
 * localhost; generated at first start into `$DATA_DIR/edge-tls/` and reused while it covers the apps domain and
 * has a month left, so a developer may trust it locally once.
 */
export async function fallbackCertificate(dataDir: string, appsDomain: string): Promise<PemPair> {
  const dir = path.join(dataDir, "edge-tls");
  const certFile = path.join(dir, "fallback-cert.pem");
  const keyFile = path.join(dir, "fallback-key.pem");
  if (existsSync(certFile) && existsSync(keyFile)) {
    const pair = { certPem: await readFile(certFile, "utf8"), keyPem: await readFile(keyFile, "utf8") };
    if (usable(pair.certPem, appsDomain)) return pair;
  }
  const pair = await generate(appsDomain);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // written beside and renamed: a process starting meanwhile reads the old pair or the new one, never half
  const suffix = `.${process.pid}.${randomBytes(4).toString("hex")}`;
  await writeFile(keyFile + suffix, pair.keyPem, { mode: 0o600 });
  await writeFile(certFile + suffix, pair.certPem);
  await rename(keyFile + suffix, keyFile);
  await rename(certFile + suffix, certFile);
  return pair;
}

function usable(certPem: string, appsDomain: string): boolean {
  try {
    const cert = new X509Certificate(certPem);
    const left = new Date(cert.validTo).getTime() - Date.now();
    return left > RENEW_DAYS * 86_400_000 && cert.checkHost(`x.${appsDomain}`) !== undefined;
  } catch {
    return false;
  }
}

async function generate(appsDomain: string): Promise<PemPair> {
  const x509 = await import("@peculiar/x509"); // loaded only by the process that makes the certificate
  const crypto = webcrypto as unknown as Crypto;
  const keys = (await crypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"])) as CryptoKeyPair;
  const now = Date.now();
  const names = [...new Set([appsDomain, `*.${appsDomain}`, "localhost"])];
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      // positive, 16 bytes: the top bit clear
      serialNumber: "01" + randomBytes(15).toString("hex"),
      name: "CN=platform edge fallback (self-signed)",
      notBefore: new Date(now - 3_600_000),
      notAfter: new Date(now + VALID_DAYS * 86_400_000),
      keys,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: "dns" as const, value }))),
      ],
    },
    crypto,
  );
  const keyPem = KeyObject.from(keys.privateKey as webcrypto.CryptoKey)
    .export({ format: "pem", type: "pkcs8" })
    .toString();
  return { certPem: cert.toString("pem") + "\n", keyPem };
}
