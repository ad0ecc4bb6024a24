import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { RuntimeError, type ContainerSpec } from "../provider.js";
import { lastError, type PodmanCli } from "./cli.js";
import { isLoopbackRegistry, registryHost } from "./spec.js";

/**
 * Makes an image present before `podman run --pull never`. An image with credentials (the platform's
 * registry) is pulled every time: the owner's credentials are checked by the registry on each start, and a
 * moved tag is followed. Others are pulled only when missing. Credentials go through a private auth
 * file, never the command line (which other users of the host can read).
 */
export class ImagePuller {
  private inFlight = new Map<string, Promise<void>>();

  constructor(private cli: PodmanCli) {}

  async ensure(image: string, auth: ContainerSpec["pullAuth"]): Promise<void> {
    if (!auth && (await this.cli.run(["image", "exists", image])).code === 0) return;
    const key = `${image}\0${auth?.username ?? ""}`;
    const running = this.inFlight.get(key);
    if (running) return running;
    const pull = this.pull(image, auth ?? null).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, pull);
    return pull;
  }

  private async pull(image: string, auth: { username: string; password: string } | null): Promise<void> {
    const host = registryHost(image);
    const args = ["pull", "--quiet"];
    if (isLoopbackRegistry(host)) args.push("--tls-verify=false");
    let dir: string | null = null;
    try {
      if (auth) {
        dir = await mkdtemp(path.join(os.tmpdir(), "platform-pull-"));
        const file = path.join(dir, "auth.json");
        const token = Buffer.from(`${auth.username}:${auth.password}`).toString("base64");
        await writeFile(file, JSON.stringify({ auths: { [host ?? "docker.io"]: { auth: token } } }), { mode: 0o600 });
        args.push("--authfile", file);
      }
      const res = await this.cli.run([...args, image], { timeoutMs: 10 * 60_000 });
      if (res.code !== 0) throw new RuntimeError(`pulling ${image}: ${lastError(res.stderr)}`, "image_pull");
    } finally {
      if (dir) await rm(dir, { recursive: true, force: true });
    }
  }
}
