import { isIP } from "node:net";
import { ConfigError } from "../config/config.js";

/**
 * Which network an IP address belongs to, and whether the platform may send a request there on a user's behalf.
 * Everything but `public` is refused unless the operator names it in OUTBOUND_ALLOW (README, configuration): a
 * class name (`loopback`, `private`, ...) or a CIDR. Cloud metadata addresses are refused even inside an allowed
 * CIDR or class; only the word `metadata` lets them through.
 */
export type AddressClass =
  "public" | "loopback" | "private" | "link_local" | "metadata" | "cgnat" | "unspecified" | "multicast" | "reserved";

const CLASSES: AddressClass[] = [
  "loopback",
  "private",
  "link_local",
  "metadata",
  "cgnat",
  "unspecified",
  "multicast",
  "reserved",
];

interface Ip {
  family: 4 | 6;
  value: bigint;
}

interface Cidr extends Ip {
  bits: number;
}

function parseV4(s: string): bigint | null {
  const parts = s.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n);
}

/** An IPv6 address (zone id dropped, `::` and a dotted IPv4 tail allowed) as a 128-bit number. */
function parseV6(raw: string): bigint | null {
  const s = raw.replace(/%.*$/, "");
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (part: string): number[] | null => {
    if (part === "") return [];
    const out: number[] = [];
    const items = part.split(":");
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (i === items.length - 1 && item.includes(".")) {
        const v4 = parseV4(item);
        if (v4 === null) return null;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9a-f]{1,4}$/i.test(item)) out.push(parseInt(item, 16));
      else return null;
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return null;
  const fill = 8 - head.length - tail.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return null;
  return [...head, ...Array<number>(fill).fill(0), ...tail].reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

function parseIp(s: string): Ip | null {
  const family = isIP(s);
  if (family === 4) return { family: 4, value: parseV4(s)! };
  if (family === 6) {
    const value = parseV6(s);
    return value === null ? null : { family: 6, value };
  }
  return null;
}

function parseCidr(s: string): Cidr | null {
  const [addr, len, extra] = s.split("/");
  const ip = parseIp(addr);
  if (!ip || extra !== undefined) return null;
  const max = ip.family === 4 ? 32 : 128;
  const bits = len === undefined ? max : /^\d{1,3}$/.test(len) ? Number(len) : -1;
  if (bits < 0 || bits > max) return null;
  return { ...ip, bits };
}

function inCidr(ip: Ip, c: Cidr): boolean {
  if (ip.family !== c.family) return false;
  const shift = BigInt((c.family === 4 ? 32 : 128) - c.bits);
  return ip.value >> shift === c.value >> shift;
}

const table = (rows: [AddressClass, string][]) => rows.map(([cls, cidr]) => [cls, parseCidr(cidr)!] as const);

// first match wins: metadata before the ranges that hold it
const V4 = table([
  ["metadata", "169.254.169.254/32"], // AWS, GCP, Azure, OpenStack
  ["metadata", "100.100.100.200/32"], // Alibaba Cloud
  ["unspecified", "0.0.0.0/8"],
  ["loopback", "127.0.0.0/8"],
  ["private", "10.0.0.0/8"],
  ["private", "172.16.0.0/12"],
  ["private", "192.168.0.0/16"],
  ["link_local", "169.254.0.0/16"],
  ["cgnat", "100.64.0.0/10"],
  ["multicast", "224.0.0.0/4"],
  ["reserved", "240.0.0.0/4"], // and the broadcast address
  ["reserved", "192.0.0.0/24"],
  ["reserved", "192.0.2.0/24"],
  ["reserved", "192.88.99.0/24"],
  ["reserved", "198.18.0.0/15"],
  ["reserved", "198.51.100.0/24"],
  ["reserved", "203.0.113.0/24"],
]);

const V6 = table([
  ["unspecified", "::/128"],
  ["loopback", "::1/128"],
  ["metadata", "fd00:ec2::254/128"], // AWS over IPv6
  ["private", "fc00::/7"],
  ["link_local", "fe80::/10"],
  ["multicast", "ff00::/8"],
  ["reserved", "2001:db8::/32"],
  ["reserved", "2001::/23"], // IETF protocol assignments, Teredo among them
  ["reserved", "2002::/16"], // 6to4: any IPv4 address inside
  ["reserved", "3fff::/20"],
]);

const GLOBAL_UNICAST_V6 = parseCidr("2000::/3")!;
/** ::ffff:a.b.c.d (IPv4-mapped) and 64:ff9b::a.b.c.d (NAT64): the IPv4 address they reach */
const EMBEDS_V4 = [parseCidr("::ffff:0:0/96")!, parseCidr("64:ff9b::/96")!];

/** The IPv4 address an IPv4-mapped or NAT64 IPv6 address stands for; the address itself otherwise. */
function reached(ip: Ip): Ip {
  if (ip.family === 6 && EMBEDS_V4.some((c) => inCidr(ip, c))) return { family: 4, value: ip.value & 0xffffffffn };
  return ip;
}

function classOf(ip: Ip): AddressClass {
  const target = reached(ip);
  for (const [cls, cidr] of target.family === 4 ? V4 : V6) if (inCidr(target, cidr)) return cls;
  // outside 2000::/3 nothing is public unicast (IPv4-compatible ::/96, discard 100::/64, unassigned space)
  if (target.family === 6 && !inCidr(target, GLOBAL_UNICAST_V6)) return "reserved";
  return "public";
}

/** The network an IP address (v4, v6, IPv4-mapped v6) belongs to; throws for what is not an IP address. */
export function classifyAddress(address: string): AddressClass {
  const ip = parseIp(address);
  if (!ip) throw new Error(`not an IP address: ${address}`);
  return classOf(ip);
}

export interface Verdict {
  allowed: boolean;
  class: AddressClass;
}

/** What the operator lets the platform reach beyond public addresses. */
export class AddressPolicy {
  constructor(
    private readonly classes: ReadonlySet<AddressClass> = new Set(),
    private readonly cidrs: readonly Cidr[] = [],
  ) {}

  /**
   * OUTBOUND_ALLOW: comma list of class names (loopback, private, link_local, metadata, cgnat, unspecified,
   * multicast, reserved) and CIDRs; empty (the default) allows public addresses only.
   */
  static fromEnv(env: Record<string, string | undefined>): AddressPolicy {
    const classes = new Set<AddressClass>();
    const cidrs: Cidr[] = [];
    for (const entry of (env.OUTBOUND_ALLOW ?? "").split(",").map((s) => s.trim().toLowerCase())) {
      if (!entry) continue;
      if ((CLASSES as string[]).includes(entry)) classes.add(entry as AddressClass);
      else {
        const cidr = parseCidr(entry);
        if (!cidr) throw new ConfigError("OUTBOUND_ALLOW", `must list ${CLASSES.join(", ")} or CIDRs, got "${entry}"`);
        cidrs.push(cidr);
      }
    }
    return new AddressPolicy(classes, cidrs);
  }

  verdict(address: string): Verdict {
    const ip = parseIp(address);
    if (!ip) return { allowed: false, class: "reserved" };
    const cls = classOf(ip);
    if (cls === "public" || this.classes.has(cls)) return { allowed: true, class: cls };
    if (cls === "metadata") return { allowed: false, class: cls };
    const target = reached(ip);
    return { allowed: this.cidrs.some((c) => inCidr(ip, c) || inCidr(target, c)), class: cls };
  }
}
