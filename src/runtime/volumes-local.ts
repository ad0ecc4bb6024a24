import { execFile } from "node:child_process";
import { chmod, mkdir, open, readFile, rename, rm, rmdir, stat, statfs } from "node:fs/promises";
import path from "node:path";
import { RuntimeError } from "./provider.js";
import type { VolumeStore, VolumeUsage } from "./volumes.js";

const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

function run(bin: string, args: string[], timeoutMs = 120_000): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) =>
    execFile(bin, args, { timeout: timeoutMs, encoding: "utf8" }, (err, _stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: number | string }) | null;
      if (e && typeof e.code === "string") return resolve({ code: 127, stderr: `${bin}: ${e.code}` });
      resolve({ code: e ? Number(e.code ?? 1) : 0, stderr: String(stderr) });
    }),
  );
}

/** /proc/self/mountinfo escapes spaces and the like as \ooo. */
const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));

async function mountPoints(): Promise<Set<string>> {
  const text = await readFile("/proc/self/mountinfo", "utf8");
  return new Set(text.split("\n").flatMap((l) => (l ? [unescape(l.split(" ")[4])] : [])));
}

/**
 * Volumes as sparse files `<dataDir>/volumes/<id>.img` formatted ext4 and loop-mounted at
 * `<dataDir>/volumes/<id>/`: the filesystem's size is the volume's size, so a full volume answers
 * ENOSPC to the container instead of filling the host. Needs root (mount), mkfs.ext4 (e2fsprogs) and
 * loop devices. Every call is idempotent; calls for one volume are serialised within the process.
 */
export class LocalVolumeStore implements VolumeStore {
  readonly root: string;
  private locks = new Map<string, Promise<unknown>>();

  constructor(dataDir: string) {
    this.root = path.resolve(dataDir, "volumes");
  }

  async unavailable(): Promise<string | null> {
    if (process.getuid?.() !== 0) return "volumes need root (loop mounts); run the platform as root";
    const mkfs = await run("mkfs.ext4", ["-V"], 10_000);
    if (mkfs.code === 127) return "mkfs.ext4 is missing; install with: apt-get install e2fsprogs mount";
    return null;
  }

  path(id: string): string {
    if (!ID.test(id)) throw new RuntimeError(`volume id "${id}" is not valid`, "bad_spec");
    return path.join(this.root, id);
  }

  private image = (id: string) => `${this.path(id)}.img`;

  /** One operation per volume at a time in this process. */
  private serial<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(id) ?? Promise.resolve();
    const next = before.then(fn, fn);
    const tail = next.catch(() => {});
    this.locks.set(id, tail);
    void tail.then(() => {
      if (this.locks.get(id) === tail) this.locks.delete(id);
    });
    return next;
  }

  private async mounted(id: string): Promise<boolean> {
    return (await mountPoints()).has(this.path(id));
  }

  async create(id: string, sizeMb: number): Promise<{ path: string }> {
    if (!Number.isInteger(sizeMb) || sizeMb < 8)
      throw new RuntimeError("a volume needs a whole number of MB, at least 8", "bad_spec");
    return this.serial(id, async () => {
      const dir = this.path(id);
      if (await this.mounted(id)) return { path: dir };
      const image = this.image(id);
      let fresh = false;
      if (!(await exists(image))) {
        await mkdir(this.root, { recursive: true, mode: 0o700 });
        // formatted under a temporary name: a crash mid-way never leaves a half-made image under the real one
        const partial = `${image}.partial`;
        const f = await open(partial, "w", 0o600);
        try {
          await f.truncate(sizeMb * 1024 * 1024); // sparse: takes disk only as it is written
        } finally {
          await f.close();
        }
        // -m 0: no blocks reserved for root (containers usually run as root and would get them)
        const mkfs = await run("mkfs.ext4", ["-q", "-F", "-m", "0", "-L", id.slice(0, 16), partial]);
        if (mkfs.code !== 0) {
          await rm(partial, { force: true });
          throw new RuntimeError(`formatting volume ${id}: ${mkfs.stderr.trim() || `mkfs.ext4 exited ${mkfs.code}`}`);
        }
        await rename(partial, image);
        fresh = true;
      }
      await this.mount(id);
      // any user a container runs as may write to a new volume's root
      if (fresh) await chmod(dir, 0o777);
      return { path: dir };
    });
  }

  private async mount(id: string): Promise<void> {
    const dir = this.path(id);
    await mkdir(dir, { recursive: true });
    const res = await run("mount", ["-o", "loop,nodev,nosuid", this.image(id), dir]);
    if (res.code !== 0 && !(await this.mounted(id)))
      throw new RuntimeError(`mounting volume ${id}: ${res.stderr.trim() || `mount exited ${res.code}`}`);
  }

  ensureMounted(id: string): Promise<{ path: string }> {
    return this.serial(id, async () => {
      const dir = this.path(id);
      if (await this.mounted(id)) return { path: dir };
      if (!(await exists(this.image(id)))) throw new RuntimeError(`volume ${id} does not exist on this host`);
      await this.mount(id);
      return { path: dir };
    });
  }

  remove(id: string): Promise<void> {
    return this.serial(id, async () => {
      const dir = this.path(id);
      if (await this.mounted(id)) {
        const res = await run("umount", [dir]);
        if (res.code !== 0 && (await this.mounted(id)))
          throw new RuntimeError(`unmounting volume ${id}: ${res.stderr.trim() || `umount exited ${res.code}`}`);
      }
      await rm(this.image(id), { force: true });
      await rm(`${this.image(id)}.partial`, { force: true });
      // only an empty mount point is removed: never data of a volume that failed to unmount
      await rmdir(dir).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOENT") throw new RuntimeError(`removing volume ${id}: ${err.message}`);
      });
    });
  }

  async usage(id: string): Promise<VolumeUsage | null> {
    if (!(await exists(this.image(id)))) return null;
    const { path: dir } = await this.ensureMounted(id);
    const s = await statfs(dir);
    return { usedBytes: (s.blocks - s.bfree) * s.bsize, sizeBytes: s.blocks * s.bsize };
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
