import { existsSync } from "node:fs";
import { chmod, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { RunAs } from "../../../pgserver/system-user.js";
import { ownedDir } from "../../../pgserver/cluster.js";
import { execAs } from "./exec.js";

const OPENSSL = process.env.OPENSSL_BIN ?? "/usr/bin/openssl";

/**
 * A self-signed certificate per instance, so clients can use sslmode=require (encryption without
 * verification). Generated into a temp directory and renamed into place, so a kill mid-way
 * never leaves a key without its certificate. EC P-256 keys generate in milliseconds.
 */
export async function ensureCertificate(
  tlsDir: string,
  commonName: string,
  hostnames: string[],
  runAs: RunAs | null,
): Promise<void> {
  if (existsSync(path.join(tlsDir, "server.crt")) && existsSync(path.join(tlsDir, "server.key"))) return;
  const parent = path.dirname(tlsDir);
  for (const stale of (await readdir(parent)).filter((n) => n.startsWith("tls.tmp-"))) {
    await rm(path.join(parent, stale), { recursive: true, force: true });
  }
  const tmp = `${tlsDir}.tmp-${process.pid}`;
  await ownedDir(tmp, runAs);
  const san = ["DNS:localhost", "IP:127.0.0.1", ...hostnames.map((h) => `DNS:${h}`)].join(",");
  try {
    await execAs(runAs, OPENSSL, [
      "req",
      "-x509",
      "-nodes",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-keyout",
      path.join(tmp, "server.key"),
      "-out",
      path.join(tmp, "server.crt"),
      "-days",
      "3650",
      "-subj",
      `/CN=${commonName}`,
      "-addext",
      `subjectAltName=${san}`,
    ]);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw new Error(`could not create the TLS certificate with ${OPENSSL}: ${(err as Error).message}`, { cause: err });
  }
  // PostgreSQL refuses a key readable by others
  await chmod(path.join(tmp, "server.key"), 0o600);
  await chmod(path.join(tmp, "server.crt"), 0o644);
  await rm(tlsDir, { recursive: true, force: true });
  await rename(tmp, tlsDir);
}

export function isValidHostname(name: string): boolean {
  return /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(name);
}
