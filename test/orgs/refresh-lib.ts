/**
 * A base image pushed straight through the registry's HTTP API (distribution v2, token flow), without a builder: one
 * layer with busybox-static and a marker file, an OCI config and manifest. Pushing another marker under the same
 * tag gives the tag a new digest, as a base image's maintainer would.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { gunzipSync } from "node:zlib";
import { BUSYBOX, rawTarGz } from "../builds/lib.js";

const sha256 = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

export interface RegistryCreds {
  registry: string;
  namespace: string;
  username: string;
  password: string;
}

async function token(c: RegistryCreds, repository: string): Promise<string> {
  const probe = await fetch(`http://${c.registry}/v2/`);
  const header = probe.headers.get("www-authenticate") ?? "";
  const params = Object.fromEntries([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
  const url = new URL(params.realm);
  url.searchParams.set("service", params.service);
  url.searchParams.set("scope", `repository:${repository}:pull,push`);
  const res = await fetch(url, {
    headers: { authorization: `Basic ${Buffer.from(`${c.username}:${c.password}`).toString("base64")}` },
  });
  if (!res.ok) throw new Error(`token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

async function pushBlob(c: RegistryCreds, repository: string, auth: string, blob: Buffer): Promise<string> {
  const digest = sha256(blob);
  const start = await fetch(`http://${c.registry}/v2/${repository}/blobs/uploads/`, {
    method: "POST",
    headers: { authorization: auth },
  });
  if (start.status !== 202) throw new Error(`blob upload: ${start.status} ${await start.text()}`);
  const location = new URL(start.headers.get("location")!, `http://${c.registry}`);
  location.searchParams.set("digest", digest);
  const put = await fetch(location, {
    method: "PUT",
    headers: { authorization: auth, "content-type": "application/octet-stream" },
    body: new Uint8Array(blob),
  });
  if (put.status !== 201) throw new Error(`blob put: ${put.status} ${await put.text()}`);
  return digest;
}

/** Pushes `<namespace>/<name>:<tag>` with a layer holding busybox and /base-version = marker; returns its digest. */
export async function pushBase(c: RegistryCreds, name: string, tag: string, marker: string): Promise<string> {
  const repository = `${c.namespace}/${name}`;
  const auth = `Bearer ${await token(c, repository)}`;
  const layer = rawTarGz([
    { name: "bin/", type: "5" },
    { name: "bin/busybox", content: await readFile(BUSYBOX), mode: 0o755 },
    { name: "base-version", content: `${marker}\n` },
  ]);
  const config = Buffer.from(
    JSON.stringify({
      architecture: process.arch === "arm64" ? "arm64" : "amd64",
      os: "linux",
      config: { Cmd: ["/bin/busybox", "sh"] },
      rootfs: { type: "layers", diff_ids: [sha256(gunzipSync(layer))] },
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: await pushBlob(c, repository, auth, config),
        size: config.length,
      },
      layers: [
        {
          mediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
          digest: await pushBlob(c, repository, auth, layer),
          size: layer.length,
        },
      ],
    }),
  );
  const put = await fetch(`http://${c.registry}/v2/${repository}/manifests/${tag}`, {
    method: "PUT",
    headers: { authorization: auth, "content-type": "application/vnd.oci.image.manifest.v1+json" },
    body: new Uint8Array(manifest),
  });
  if (put.status !== 201) throw new Error(`manifest put: ${put.status} ${await put.text()}`);
  return sha256(manifest);
}
