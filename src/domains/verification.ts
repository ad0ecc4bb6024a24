import type { DnsLookup, Lookup, LookupError } from "./dns.js";
import { txtName } from "./names.js";

/** One record the verification looked for: where, what it wanted, what DNS answered. */
export interface RecordCheck {
  name: string;
  expected: string;
  found: string[];
  /** why DNS gave no answer (no_record, timeout, unreachable, failed); null when it answered */
  error: LookupError | null;
}

export interface VerificationCheck {
  verified: boolean;
  method: "txt" | "cname" | null;
  /** why it is not verified, in one sentence; null when verified */
  reason: string | null;
  txt: RecordCheck;
  cname: RecordCheck;
}

const ERRORS: Record<LookupError, string> = {
  no_record: "has none",
  timeout: "got no answer in time (DNS timeout)",
  unreachable: "could not be asked (DNS server unreachable)",
  failed: "failed at the DNS server",
};

function check(name: string, expected: string, r: Lookup<string[]>): RecordCheck {
  return { name, expected, found: r.ok ? r.values : [], error: r.ok ? null : r.error };
}

function explain(kind: "TXT" | "CNAME", c: RecordCheck): string {
  if (c.error) return `${kind} ${c.name} ${ERRORS[c.error]}`;
  if (!c.found.length) return `${kind} ${c.name} has none`;
  return `${kind} ${c.name} is ${c.found.map((v) => JSON.stringify(v)).join(", ")}, not ${JSON.stringify(c.expected)}`;
}

/**
 * Whether DNS shows control of the domain: the TXT record `_platform-verify.<domain>` holding the token, or the
 * domain itself a CNAME to the app's host. Both questions are asked at once, each bounded by DNS_TIMEOUT_MS.
 */
export async function checkDomain(
  dns: DnsLookup,
  domain: string,
  token: string,
  appHost: string,
): Promise<VerificationCheck> {
  const [txtAnswer, cnameAnswer] = await Promise.all([dns.txt(txtName(domain)), dns.cname(domain)]);
  const txt = check(txtName(domain), token, txtAnswer);
  const cname = check(domain, appHost, cnameAnswer);
  const method = txt.found.includes(token) ? "txt" : cname.found.includes(appHost) ? "cname" : null;
  const reason = method ? null : `Not verified: ${explain("TXT", txt)}; ${explain("CNAME", cname)}.`;
  return { verified: method !== null, method, reason, txt, cname };
}
