import {
  createPlatformClient,
  PlatformApiError,
  PlatformNetworkError,
  unwrap,
  type paths,
} from "@hosting-platform/sdk";

export { unwrap, PlatformApiError };

/** The double-submit token: the readable cookie the server set, repeated in a header on every request. */
export function csrfToken(): string {
  const m = /(?:^|;\s*)platform_csrf=([^;]*)/.exec(document.cookie);
  return m ? decodeURIComponent(m[1]) : "";
}

/**
 * Whose resources the console works on: "me" (the account's own) or "org" (the account's organization: every call
 * then sends X-Owner: org, so lists show and forms create company assets). Kept in localStorage across visits.
 */
export type OwnerContext = "me" | "org";
const OWNER_KEY = "platform.owner";
let owner: OwnerContext = readOwner();

function readOwner(): OwnerContext {
  try {
    return window.localStorage.getItem(OWNER_KEY) === "org" ? "org" : "me";
  } catch {
    return "me";
  }
}

export const ownerContext = (): OwnerContext => owner;

export function setOwnerContext(next: OwnerContext): void {
  owner = next;
  try {
    if (next === "org") window.localStorage.setItem(OWNER_KEY, "org");
    else window.localStorage.removeItem(OWNER_KEY);
  } catch {
    // storage refused (private mode): the choice lasts for this page only
  }
}

/**
 * Paths that are always the person's, whatever the context: the account, sign-in, its API keys (organization keys
 * are /v1/org/api-keys), the organization routes (they find the caller's organization themselves; creating
 * one and accepting an invitation are personal acts) and the partner routes (a partner acts for its own account).
 */
const PERSONAL = /^\/(?:v1\/(?:me|auth|api-keys|org|partner)(?:\/|$)|console\/)/;

const sameOrigin: typeof fetch = (input, init) => {
  const request = new Request(input, init);
  request.headers.set("x-platform-csrf", csrfToken());
  if (owner === "org" && !request.headers.has("x-owner") && !PERSONAL.test(new URL(request.url).pathname))
    request.headers.set("x-owner", "org");
  // the HttpOnly session cookie goes with every same-origin request; no token ever reaches this script
  return fetch(request, { credentials: "same-origin" });
};

/** Every call of the console goes through the generated SDK, against the public API, as the signed-in account. */
export const client = createPlatformClient({ baseUrl: window.location.origin, fetch: sameOrigin, retries: 2 });
export const api = client.api;

/** The console's own session endpoints (sign-in sets the HttpOnly cookie); same transport, same CSRF header. */
export async function session(path: "/console/session" | "/console/signup" | "/console/signout", body?: object) {
  await client.request("POST", path, body ? { body } : {});
}

/** An error in words, with its code, for display. */
export function describeError(err: unknown): { message: string; code: string | null } {
  if (err instanceof PlatformApiError) return { message: err.message, code: err.code };
  if (err instanceof PlatformNetworkError) return { message: err.message, code: "network" };
  // a payment provider's error (Stripe.js, Toss Payments) carries its own code
  const code = (err as { code?: unknown } | null)?.code;
  return { message: err instanceof Error ? err.message : String(err), code: typeof code === "string" ? code : null };
}

export type { Database as Db } from "@hosting-platform/sdk";

type Get<P extends keyof paths> = paths[P] extends {
  get: { responses: { 200: { content: { "application/json": infer T } } } };
}
  ? T
  : never;
export type Pod = Get<"/v1/pods/{id}">;
export type PodGroup = Get<"/v1/pod-groups/{id}">;
export type Volume = Get<"/v1/volumes/{id}">;
export type Template = Get<"/v1/pod-templates/{id}">;
export type CheckoutConfig = Get<"/v1/billing/checkout-config">;
export type Topup = Get<"/v1/billing/topups/{id}">;

type Post<P extends keyof paths> = paths[P] extends {
  post: { responses: { 200: { content: { "application/json": infer T } } } };
}
  ? T
  : never;
export type Site = Get<"/v1/static/{slug}">;
export type Deployment = Get<"/v1/static/{slug}/deployments/{id}">;
export type AppStats = Get<"/v1/static/{slug}/stats">;
export type Domain = Get<"/v1/domains">[number];
export type DnsProvider = Get<"/v1/apps/{slug}/domains/{id}/dns-provider">;
export type DomainCheck = Post<"/v1/apps/{slug}/domains/{id}/verify">;
export type Autosetup = Post<"/v1/apps/{slug}/domains/{id}/cf-autosetup">;
export type Build = Get<"/v1/builds">[number];
export type BuildDetail = Get<"/v1/builds/{id}">;

export type Org = Get<"/v1/org">;
export type OrgMember = Get<"/v1/org/members">["items"][number];
export type OrgInvite = Get<"/v1/org/invites">["items"][number];
export type InvitePreview = Get<"/v1/org/invites/preview">;
export type InviteOutcome = Post<"/v1/org/invites">["items"][number];

export type Partner = Get<"/v1/partner">;
export type PartnerChild = Get<"/v1/partner/users">["items"][number];
export type PartnerUsage = Get<"/v1/partner/usage">;
export type PartnerInvoice = Get<"/v1/partner/invoices">["invoices"][number];
export type PartnerInvoiceDetail = Get<"/v1/partner/invoices/{id}">;
