/**
 * A lock held across every platform process on this host (flock(2) on a file, through util-linux's `flock`): a
 * child holds it while it waits on its stdin, so the kernel releases it when the holder exits or is killed -9.
 * Used where several platforms on one machine change host-wide state in steps (podman networks and their
 * isolation rules): one's removal and another's creation of the same recycled subnet must not interleave.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";

const LOCK_DIR = process.env.PLATFORM_LOCK_DIR ?? "/run/lock";

export async function withHostLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const child = spawn("flock", ["-x", `${LOCK_DIR}/platform-${name}.lock`, "-c", "echo held; exec cat >/dev/null"], {
    stdio: ["pipe", "pipe", "ignore"],
  });
  const held = new Promise<boolean>((resolve) => {
    child.stdout.once("data", () => resolve(true));
    child.once("error", () => resolve(false)); // no flock here: the steps run unlocked, as before
    child.once("exit", () => resolve(false));
  });
  const timeout = setTimeout(() => child.kill(), 60_000);
  const locked = await held;
  clearTimeout(timeout);
  try {
    return await fn();
  } finally {
    if (locked) {
      child.stdin.end();
      await once(child, "exit").catch(() => {});
    }
  }
}
