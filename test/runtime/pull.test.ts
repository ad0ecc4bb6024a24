import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { testImage } from "../helpers/images.js";
import { RuntimeError } from "../../src/runtime/index.js";
import { cleanup, podman, PREFIX, runtime, spec, waitFor } from "./lib.js";

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * Pulls with credentials from a plain-HTTP registry on loopback (as the platform's registry is): Debian's
 * docker-registry behind a small proxy that demands HTTP Basic credentials, so the provider's auth file
 * and --tls-verify=false are exercised end to end.
 */
describe("podman runtime: pulling with credentials from a loopback registry", () => {
  let registry: ChildProcess;
  let proxy: http.Server;
  let dir: string;
  let proxyPort: number;
  const seen: string[] = [];

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "rtt-registry-"));
    const registryPort = await freePort();
    await writeFile(
      path.join(dir, "config.yml"),
      `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/data\nhttp:\n  addr: 127.0.0.1:${registryPort}\n`,
    );
    registry = spawn("docker-registry", ["serve", path.join(dir, "config.yml")], { stdio: "ignore" });
    await waitFor("registry", async () => (await fetch(`http://127.0.0.1:${registryPort}/v2/`).catch(() => null))?.ok);
    const expected = `Basic ${Buffer.from("puller:right-password").toString("base64")}`;
    proxy = http.createServer((req, res) => {
      seen.push(req.headers.authorization ? "auth" : "anonymous");
      if (req.headers.authorization !== expected) {
        res.writeHead(401, { "www-authenticate": 'Basic realm="test"', "content-type": "application/json" });
        return res.end('{"errors":[{"code":"UNAUTHORIZED","message":"credentials"}]}');
      }
      const upstream = http.request(
        { host: "127.0.0.1", port: registryPort, path: req.url, method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    proxyPort = (proxy.address() as AddressInfo).port;
    const v1 = await testImage("TEST_IMAGE_HTTPD_V1");
    podman("push", "--quiet", "--tls-verify=false", v1, `127.0.0.1:${registryPort}/${PREFIX}/httpd:v1`);
  });

  after(async () => {
    await cleanup();
    try {
      podman("rmi", "--force", `127.0.0.1:${proxyPort}/${PREFIX}/httpd:v1`);
    } catch {
      // never pulled
    }
    proxy?.close();
    registry?.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  test("the right credentials pull and run the image; wrong or missing ones are an image_pull refusal", async () => {
    const image = `127.0.0.1:${proxyPort}/${PREFIX}/httpd:v1`;
    const refusedWith = async (auth: { username: string; password: string } | null) =>
      assert.rejects(runtime.create(spec(`pull-${seen.length}`, image, { pullAuth: auth })), (err: unknown) => {
        assert.ok(err instanceof RuntimeError);
        assert.equal(err.kind, "image_pull");
        return true;
      });
    await refusedWith({ username: "puller", password: "wrong" });
    await refusedWith(null);

    const net = await runtime.ensureNetwork(`${PREFIX}-pull`);
    const pullAuth = { username: "puller", password: "right-password" };
    const c = await runtime.create(spec("pulled", image, { pullAuth, port: 8080, network: net.name }));
    await waitFor("healthy", () => runtime.health(c.name));
    assert.equal(await (await fetch(`http://${c.address}/`)).text(), "v1\n");
    assert.ok(seen.includes("auth"));

    // with credentials the image is checked again at every start: wrong ones are refused although it is present
    await runtime.remove(c.name);
    await refusedWith({ username: "puller", password: "wrong" });
  });
});
