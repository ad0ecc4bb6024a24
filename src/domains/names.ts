import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import { ApiError } from "../http/errors.js";

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** The TXT record that proves control of a domain: `_platform-verify.<domain>` holding the domain's token. */
export const txtName = (domain: string): string => `_platform-verify.${domain}`;

/** The host a domain's CNAME points to: the app's own name at the edge. */
export const appHost = (slug: string, appsDomain: string): string => `${slug}.${appsDomain}`;

const under = (name: string, zone: string): boolean => name === zone || name.endsWith(`.${zone}`);

/**
 * A custom domain as stored: lower case, ASCII (internationalized names in their xn-- form), no trailing dot, at
 * least two labels of letters, digits and hyphens, not an IP address, not one of the platform's own names
 * (the apps domain, the base domain). Throws 400 invalid_request naming the problem.
 */
export function normalizeDomain(input: string, own: { appsDomain: string; baseDomain: string }): string {
  const bad = (why: string) => new ApiError("invalid_request", `domain: "${input}" ${why}.`);
  const trimmed = input.trim().replace(/\.$/, "");
  if (isIP(trimmed) || isIP(trimmed.replace(/^\[|\]$/g, ""))) throw bad("is an IP address, not a domain name");
  const name = domainToASCII(trimmed);
  if (!name) throw bad("is not a valid domain name");
  if (name.length > 253) throw bad("is longer than 253 characters");
  const labels = name.split(".");
  if (labels.length < 2) throw bad("needs at least two labels (like www.example.com)");
  if (!labels.every((l) => LABEL.test(l)))
    throw bad("may hold only letters, digits and hyphens, in labels of 1-63 characters (no wildcards)");
  if (/^\d+$/.test(labels[labels.length - 1]) || isIP(name)) throw bad("is an IP address, not a domain name");
  if (under(name, own.appsDomain) || under(name, own.baseDomain))
    throw bad("is one of the platform's own names; use a domain you control");
  return name;
}

/** The name and its parents down to two labels: www.shop.example.com, shop.example.com, example.com. */
export function parents(domain: string): string[] {
  const labels = domain.split(".");
  const out: string[] = [];
  for (let i = 0; i + 2 <= labels.length; i++) out.push(labels.slice(i).join("."));
  return out;
}
