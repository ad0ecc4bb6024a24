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
  // every RETURN goes to the top and every DROP to the bottom, so whatever order networks come and go in, no
  // subnet's DROP can stand above its own RETURN (which would cut a network off from its own gateway); a chain
  // left that way by an older version is repaired here
  const rules = await chainRules();
  const at = (rule: string[]) => rules.indexOf(`-A ${CHAIN} ${rule.join(" ")}`);
  if (at(own) < 0) await iptables(["-I", CHAIN, "1", ...own]);
  const drop = at(others);
  if (drop >= 0 && at(own) >= 0 && drop < at(own)) {
    while (await iptables(["-D", CHAIN, ...others]));
    await iptables(["-A", CHAIN, ...others]);
  } else if (drop < 0) await iptables(["-A", CHAIN, ...others]);
}

/** The chain's rules as `iptables -S` prints them (`-A CHAIN -s 10.89.1.0/24 -d ... -j RETURN`). */
async function chainRules(): Promise<string[]> {
  return run("iptables", ["-w", "-t", "raw", "-S", CHAIN]).then(
    (r) => r.stdout.split("\n"),
    () => [],
  );
}

export async function unisolateSubnet(subnet: string): Promise<void> {
  // the DROP first: cut short, this leaves a RETURN alone, which blocks nothing
  await iptables(["-D", CHAIN, "-s", subnet, "-d", NETWORK_POOL, "-j", "DROP"]);
  await iptables(["-D", CHAIN, "-s", subnet, "-d", subnet, "-j", "RETURN"]);
}
