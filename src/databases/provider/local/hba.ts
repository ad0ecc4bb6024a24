import net from "node:net";
import { ProviderError } from "../types.js";
import { ADMIN_ROLE, POOL_ADMIN_ROLE, REPLICATION_ROLE } from "./record.js";

/** Normalises "10.0.0.1" → "10.0.0.1/32"; throws bad_cidr on anything PostgreSQL would not accept. */
export function normalizeCidr(input: string): string {
  const text = input.trim();
  const [addr, prefixText, ...rest] = text.split("/");
  const family = net.isIP(addr ?? "");
  const max = family === 4 ? 32 : family === 6 ? 128 : 0;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!family || rest.length || !(prefix >= 0 && prefix <= max)) {
    throw new ProviderError("bad_cidr", `"${input}" is not an IP address or CIDR block (e.g. 203.0.113.0/24)`);
  }
  return `${addr}/${prefix}`;
}

export function normalizeCidrs(list: string[]): string[] {
  return [...new Set(list.map(normalizeCidr))];
}

/** Addresses customers may connect from: their allowlist, or everything when it is empty, plus the platform's own. */
function clientRanges(allowlist: string[], alwaysAllowed: string[]): string[] {
  const customer = allowlist.length ? allowlist : ["0.0.0.0/0", "::/0"];
  return [...new Set([...alwaysAllowed, ...customer])];
}

/**
 * pg_hba.conf of a node. Order matters (first match wins):
 *  - the platform's roles only over the instance's private Unix socket (admin) or loopback (replication);
 *  - the socket also serves the co-located pooler, which enforces the allowlist itself;
 *  - TCP clients only with TLS and only from allowed ranges; everything else finds no entry and is refused.
 */
export function renderServerHba(allowlist: string[], alwaysAllowed: string[]): string {
  const lines = [
    "# written by the platform; edits are overwritten",
    `local   all          ${ADMIN_ROLE}                     scram-sha-256`,
    `local   all          all                                scram-sha-256`,
    `host    replication  ${REPLICATION_ROLE}  127.0.0.1/32   scram-sha-256`,
    `host    all          ${ADMIN_ROLE},${REPLICATION_ROLE}  all  reject`,
    ...clientRanges(allowlist, alwaysAllowed).map((cidr) => `hostssl all          all  ${cidr}  scram-sha-256`),
  ];
  return lines.join("\n") + "\n";
}

/** The pooler's hba (PgBouncer auth_type=hba): the platform's console user from loopback, then the same client ranges, TLS required. */
export function renderPoolHba(allowlist: string[], alwaysAllowed: string[]): string {
  const lines = [
    "# written by the platform; edits are overwritten",
    `hostssl pgbouncer  ${POOL_ADMIN_ROLE}  127.0.0.1/32  scram-sha-256`,
    `host    all  ${ADMIN_ROLE},${REPLICATION_ROLE},${POOL_ADMIN_ROLE}  0.0.0.0/0  reject`,
    ...clientRanges(allowlist, alwaysAllowed).map((cidr) => `hostssl all  all  ${cidr}  scram-sha-256`),
  ];
  return lines.join("\n") + "\n";
}
