import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { RuntimeError } from "./provider.js";

/** Files added to an image: path inside the image → content (mode 0644) or content with a mode. */
export type ImageFiles = Record<string, string | { content: string | Buffer; mode: number }>;

export interface BusyboxImage {
  /** e.g. localhost/platform/sandbox:busybox */
  tag: string;
  files?: ImageFiles;
  cmd?: string[];
  entrypoint?: string[];
  workdir?: string;
}

/** bumped when the layout below changes, so images built by an older platform are rebuilt */
const LAYOUT_VERSION = "busybox-image-1";
const BUSYBOX = process.env.BUSYBOX_STATIC ?? "/bin/busybox";

function run(
  bin: string,
  args: string[],
  timeoutMs = 300_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile(bin, args, { timeout: timeoutMs, encoding: "utf8", maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: number | string }) | null;
      if (e && typeof e.code === "string") return reject(new RuntimeError(`${bin} could not run (${e.code})`));
      resolve({ code: e ? Number(e.code ?? 1) : 0, stdout, stderr });
    }),
  );
}

/**
 * Builds (with `buildah bud --isolation chroot`, FROM scratch, nothing downloaded) an image holding the
 * static busybox of Debian's busybox-static with its applets linked in /bin, /tmp, a root user and the
 * given files. Each build is also tagged `<repository>:h-<content hash>`; when that tag exists the build
 * is skipped and only the wanted tag is pointed at it. Returns whether it built.
 */
export async function buildBusyboxImage(image: BusyboxImage, buildah = "buildah"): Promise<{ built: boolean }> {
  const busybox = await readFile(BUSYBOX).catch(() => {
    throw new RuntimeError(`${BUSYBOX} is missing; install with: apt-get install busybox-static`);
  });
  const hash = createHash("sha256").update(LAYOUT_VERSION).update(busybox);
  const files = Object.entries(image.files ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [p, f] of files) {
    const content = typeof f === "string" ? f : f.content;
    hash.update(`\0${p}\0${typeof f === "string" ? 0o644 : f.mode}\0`).update(content);
  }
  hash.update(JSON.stringify([image.cmd ?? null, image.entrypoint ?? null, image.workdir ?? null]));
  const colon = image.tag.lastIndexOf(":");
  const repository = colon > image.tag.lastIndexOf("/") ? image.tag.slice(0, colon) : image.tag;
  const hashTag = `${repository}:h-${hash.digest("hex").slice(0, 16)}`;

  if ((await run(buildah, ["inspect", "--type", "image", hashTag], 60_000)).code === 0) {
    const tagged = await run(buildah, ["tag", hashTag, image.tag], 60_000);
    if (tagged.code !== 0) throw new RuntimeError(`tagging ${image.tag}: ${tagged.stderr.trim()}`);
    return { built: false };
  }

  const dir = await mkdtemp(path.join(os.tmpdir(), "platform-image-"));
  try {
    const root = path.join(dir, "rootfs");
    for (const d of ["bin", "etc", "root", "tmp"]) await mkdir(path.join(root, d), { recursive: true });
    await chmod(path.join(root, "tmp"), 0o1777);
    await copyFile(BUSYBOX, path.join(root, "bin/busybox"));
    await chmod(path.join(root, "bin/busybox"), 0o755);
    const applets = (await run(BUSYBOX, ["--list"], 30_000)).stdout.split("\n").filter((a) => /^[\w.[\]-]+$/.test(a));
    for (const a of applets) if (a !== "busybox") await symlink("busybox", path.join(root, "bin", a));
    await writeFile(
      path.join(root, "etc/passwd"),
      "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n",
    );
    await writeFile(path.join(root, "etc/group"), "root:x:0:\nnobody:x:65534:\n");
    for (const [p, f] of files) {
      const target = path.join(root, path.normalize(`/${p}`));
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, typeof f === "string" ? f : f.content);
      await chmod(target, typeof f === "string" ? 0o644 : f.mode);
    }
    const lines = ["FROM scratch", "COPY rootfs/ /"];
    if (image.workdir) lines.push(`WORKDIR ${image.workdir}`);
    if (image.entrypoint) lines.push(`ENTRYPOINT ${JSON.stringify(image.entrypoint)}`);
    if (image.cmd) lines.push(`CMD ${JSON.stringify(image.cmd)}`);
    await writeFile(path.join(dir, "Containerfile"), lines.join("\n") + "\n");
    const built = await run(buildah, [
      "bud",
      "--isolation",
      "chroot",
      "--layers=false",
      "--quiet",
      "--tag",
      image.tag,
      "--tag",
      hashTag,
      "--file",
      path.join(dir, "Containerfile"),
      dir,
    ]);
    if (built.code !== 0) throw new RuntimeError(`building ${image.tag}: ${built.stderr.trim().split("\n").at(-1)}`);
    return { built: true };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
