/**
 * Helpers for the registry tests: a tiny image built offline (busybox-static's httpd, FROM scratch,
 * `buildah bud --isolation chroot`), podman with a private auth file per test, and clean-up of every
 * image name a test created.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(cmd: string, args: string[], timeoutMs = 120_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

export const unique = (prefix = "regtest") => `${prefix}-${process.pid}-${randomBytes(3).toString("hex")}`;

/** podman with its own auth file: logins of one test never meet another's. */
export class Podman {
  readonly images = new Set<string>();
  private constructor(
    readonly dir: string,
    readonly authfile: string,
  ) {}

  static async create(): Promise<Podman> {
    const dir = await mkdtemp(path.join(os.tmpdir(), "regtest-"));
    const authfile = path.join(dir, "auth.json");
    await writeFile(authfile, "{}");
    return new Podman(dir, authfile);
  }

  login(registry: string, username: string, password: string): Promise<Run> {
    return run("podman", [
      "login",
      "--tls-verify=false",
      "--authfile",
      this.authfile,
      "-u",
      username,
      "-p",
      password,
      registry,
    ]);
  }

  /** a fresh local image (unique name) whose tiny layer is busybox-static */
  async build(): Promise<string> {
    const ctx = await mkdtemp(path.join(this.dir, "ctx-"));
    await copyFile("/bin/busybox", path.join(ctx, "busybox"));
    await writeFile(
      path.join(ctx, "Containerfile"),
      `FROM scratch\nCOPY busybox /bin/busybox\nLABEL regtest=${randomBytes(4).toString("hex")}\nCMD ["/bin/busybox","httpd","-f","-p","8080"]\n`,
    );
    const name = `localhost/${unique()}:1`;
    const res = await run("buildah", ["bud", "--isolation", "chroot", "-q", "-t", name, ctx]);
    if (res.code !== 0) throw new Error(`buildah bud failed: ${res.stderr}`);
    this.images.add(name);
    return name;
  }

  async tag(source: string, target: string): Promise<void> {
    const res = await run("podman", ["tag", source, target]);
    if (res.code !== 0) throw new Error(`podman tag failed: ${res.stderr}`);
    this.images.add(target);
  }

  push(image: string, creds?: string): Promise<Run> {
    const auth = creds ? ["--creds", creds] : ["--authfile", this.authfile];
    return run("podman", ["push", "--tls-verify=false", ...auth, image]);
  }

  async pull(image: string, creds?: string): Promise<Run> {
    const auth = creds ? ["--creds", creds] : ["--authfile", this.authfile];
    const res = await run("podman", ["pull", "--tls-verify=false", ...auth, image]);
    if (res.code === 0) this.images.add(image);
    return res;
  }

  async removeImage(image: string): Promise<void> {
    await run("podman", ["rmi", "--force", image]);
    this.images.delete(image);
  }

  async cleanup(): Promise<void> {
    for (const image of this.images) await run("podman", ["rmi", "--force", image]);
    this.images.clear();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** The claims of a JWT (not verified: the registry does that). */
export function claims(token: string): { sub: string; aud: string; exp: number; access: unknown[] } {
  return JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString("utf8"));
}

export const denied = (r: Run) =>
  r.code !== 0 && /denied|unauthorized|authentication required|insufficient/i.test(r.stderr);
