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

const sameOrigin: typeof fetch = (input, init) => {
  const request = new Request(input, init);
  request.headers.set("x-platform-csrf", csrfToken());
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
