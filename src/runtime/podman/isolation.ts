import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** every owner network podman makes here comes from this pool (netavark's default for rootful bridges) */
export const NETWORK_POOL = "10.89.0.0/16";
const CHAIN = "PLATFORM_ISOLATION";

async function iptables(args: string[]): Promise<boolean> {
  return run("iptables", ["-w", "-t", "raw", ...args]).then(
    () => true,
    () => false,
  );
}

/**
 * Owner networks may not reach each other. netavark's `isolate=true` does this with FORWARD rules it adds and
 * removes as containers come and go, and a test run saw one owner's container reach another's while other
 * networks were set up and torn down at the same time. So the platform keeps rules of its own that netavark never
 * touches, in the raw table before routing: from a network's subnet, its own subnet passes and the rest of the
 * pool is dropped. Idempotent; without iptables (or its rights) isolation rests on netavark alone.
 */
export async function isolateSubnet(subnet: string): Promise<void> {
  if (!(await iptables(["-nL", CHAIN]))) {
    await iptables(["-N", CHAIN]);
  }
  if (!(await iptables(["-C", "PREROUTING", "-j", CHAIN]))) await iptables(["-I", "PREROUTING", "1", "-j", CHAIN]);
  const own = ["-s", subnet, "-d", subnet, "-j", "RETURN"];
  const others = ["-s", subnet, "-d", NETWORK_POOL, "-j", "DROP"];
  // the RETURN must come before the DROP: both are inserted at the top, the DROP first
  if (!(await iptables(["-C", CHAIN, ...others]))) await iptables(["-I", CHAIN, "1", ...others]);
  if (!(await iptables(["-C", CHAIN, ...own]))) await iptables(["-I", CHAIN, "1", ...own]);
}

export async function unisolateSubnet(subnet: string): Promise<void> {
  await iptables(["-D", CHAIN, "-s", subnet, "-d", subnet, "-j", "RETURN"]);
  await iptables(["-D", CHAIN, "-s", subnet, "-d", NETWORK_POOL, "-j", "DROP"]);
}
