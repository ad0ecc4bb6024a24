import { createPlatformClient, PlatformApiError, PlatformNetworkError, unwrap } from "@hosting-platform/sdk";

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
  return { message: err instanceof Error ? err.message : String(err), code: null };
}

export type { Database as Db } from "@hosting-platform/sdk";
