import { execFileSync } from "node:child_process";

export interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

const SERVICE_USER = process.env.PG_SYSTEM_USER ?? "pgplatform";
let resolved: RunAs | null | undefined;

/**
 * PostgreSQL refuses to run as root. When the platform is root, its servers run as an
 * unprivileged system user, created on first use; otherwise they run as the current user (null).
 */
export function postgresRunAs(): RunAs | null {
  if (resolved !== undefined) return resolved;
  if (process.getuid?.() !== 0) return (resolved = null);
  let ids = lookup(SERVICE_USER);
  if (!ids) {
    try {
      execFileSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVICE_USER], {
        stdio: "pipe",
      });
    } catch (err) {
      // a concurrent start may have created it; only fail if it still does not exist
      if (!lookup(SERVICE_USER))
        throw new Error(`cannot create system user ${SERVICE_USER}: ${(err as Error).message}`, { cause: err });
    }
    ids = lookup(SERVICE_USER);
  }
  return (resolved = { ...ids!, name: SERVICE_USER });
}

function lookup(name: string): { uid: number; gid: number } | null {
  try {
    const uid = Number(execFileSync("id", ["-u", name], { stdio: "pipe" }).toString().trim());
    const gid = Number(execFileSync("id", ["-g", name], { stdio: "pipe" }).toString().trim());
    return { uid, gid };
  } catch {
    return null;
  }
}
