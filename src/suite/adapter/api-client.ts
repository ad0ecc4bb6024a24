import { ApiError } from "../../http/errors.js";

/**
 * The suite's REST APIs (directory, metering) as the adapter calls them: the service credential as a bearer token,
 * JSON, and the suite's rate limit kept: calls are spaced to `rps` per second in this process, and a 429 waits for
 * its Retry-After (at most 3 times). The base URL is the operator's configuration, not a user's address, so this is
 * not the guarded outbound client.
 */
export function suiteApiClient(opts: { baseUrl: string; token: string; rps: number; timeoutMs?: number }) {
  const spacingMs = 1000 / opts.rps;
  let nextSlot = 0;
  const slot = async () => {
    const now = Date.now();
    const at = Math.max(now, nextSlot);
    nextSlot = at + spacingMs;
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  };

  async function call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    for (let attempt = 0; ; attempt++) {
      await slot();
      const res = await fetch(opts.baseUrl + path, {
        method,
        headers: {
          authorization: `Bearer ${opts.token}`,
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
      });
      if (res.status === 429 && attempt < 3) {
        const wait = Math.min(30, Number(res.headers.get("retry-after")) || 1);
        await res.body?.cancel();
        await new Promise((r) => setTimeout(r, wait * 1000));
        continue;
      }
      const text = await res.text();
      if (!res.ok) throw new SuiteApiError(res.status, `${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
      return (text ? JSON.parse(text) : null) as T;
    }
  }

  return { call };
}

export type SuiteApiClient = ReturnType<typeof suiteApiClient>;

/** An answer of the suite's API other than 2xx; `status` 404 means "not listed". */
export class SuiteApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The suite could not be reached or refused: a 503 the caller can retry, never a 500. */
export function suiteUnavailable(err: unknown): ApiError {
  return new ApiError("suite_unavailable", `The suite did not answer: ${(err as Error).message}`);
}
