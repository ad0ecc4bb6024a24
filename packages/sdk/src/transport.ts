import { apiErrorOf, PlatformApiError, PlatformNetworkError, retryAfterSeconds, type PlatformError } from "./errors.js";

export interface TransportOptions {
  /** the API's base address, e.g. https://api.example.com (paths start with /v1) */
  baseUrl: string;
  /** bearer token (op_u_ or opk_), or a function giving it per request */
  token?: string | (() => string | undefined);
  /** retries after the first attempt (default 3) */
  retries?: number;
  /** per-attempt timeout in milliseconds (default 30 000) */
  timeoutMs?: number;
  /** the longest single wait between attempts, Retry-After included (default 30 000) */
  maxRetryDelayMs?: number;
  /** a fetch of your own (tests, proxies); defaults to the global one */
  fetch?: typeof fetch;
  /** extra headers on every request (e.g. user-agent where the runtime allows it) */
  headers?: Record<string, string>;
  /**
   * whose resources the calls work on: "me" (default, the account's own) or "org", the caller's organization
   * (sent as the X-Owner header: what is created then is a company asset)
   */
  owner?: "me" | "org";
  /** told before each retry: what failed and how long the client waits */
  onRetry?: (info: { attempt: number; delayMs: number; method: string; url: string; reason: string }) => void;
}

/** Methods that may be repeated: the second request changes nothing the first did not. */
const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);
/** Answers worth another attempt: rate limited, and the gateway or server briefly unavailable. */
const RETRY_STATUS = new Set([408, 429, 502, 503, 504]);

const sleep = (ms: number, signal?: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

const newKey = () => globalThis.crypto.randomUUID();

/**
 * A fetch for the platform: bearer auth; an Idempotency-Key on every POST that has none (the server
 * replays the first answer for a repeated key, so a POST is retried as safely as a GET); retries of
 * idempotent requests and keyed POSTs on network errors, 408/429/502/503/504, honouring Retry-After;
 * a 429 is retried for any method (the server refused it before doing anything). A final error answer
 * throws PlatformApiError, no answer PlatformNetworkError, each with the number of retries made.
 * Uses only fetch, Request and AbortSignal: it runs in Node 20 and in browsers.
 */
export function platformFetch(
  opts: TransportOptions,
): (input: Request | string | URL, init?: RequestInit) => Promise<Response> {
  const doFetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
  const retries = opts.retries ?? 3;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const maxDelay = opts.maxRetryDelayMs ?? 30_000;

  return async (input, init) => {
    const original = new Request(input, init);
    const method = original.method.toUpperCase();
    const headers = new Headers(original.headers);
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (!headers.has(k)) headers.set(k, v);
    if (opts.owner && !headers.has("x-owner")) headers.set("x-owner", opts.owner);
    const token = typeof opts.token === "function" ? opts.token() : opts.token;
    if (token && !headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
    if (method === "POST" && !headers.has("idempotency-key")) headers.set("idempotency-key", newKey());
    const repeatable = IDEMPOTENT.has(method) || headers.has("idempotency-key");
    // the body is read once, so every attempt sends the same bytes
    const body = original.body === null ? undefined : await original.arrayBuffer();
    const url = original.url;
    const path = new URL(url).pathname;

    for (let attempt = 0; ; attempt++) {
      const signal = AbortSignal.any([
        AbortSignal.timeout(timeoutMs),
        ...(init?.signal ? [init.signal] : [original.signal]),
      ]);
      let failure: PlatformError;
      let delayMs: number;
      try {
        const response = await doFetch(
          new Request(url, { method, headers, body, signal, redirect: original.redirect }),
        );
        if (response.ok || (response.status >= 300 && response.status < 400)) return response;
        const error = await apiErrorOf(response, method, path);
        const retryable = RETRY_STATUS.has(response.status) && (repeatable || response.status === 429);
        if (!retryable || attempt >= retries) {
          error.retries = attempt;
          throw error;
        }
        failure = error;
        delayMs = error.retryAfter !== null ? error.retryAfter * 1000 : backoff(attempt);
      } catch (err) {
        if (err instanceof PlatformApiError) throw err;
        if ((init?.signal ?? original.signal)?.aborted) throw err;
        const timedOut = (err as Error)?.name === "TimeoutError";
        failure = new PlatformNetworkError(
          timedOut
            ? `no answer from ${new URL(url).host} within ${timeoutMs} ms`
            : `cannot reach ${new URL(url).host}: ${networkReason(err)}`,
          err,
        );
        if (!repeatable || attempt >= retries) {
          failure.retries = attempt;
          throw failure;
        }
        delayMs = backoff(attempt);
      }
      delayMs = Math.min(delayMs, maxDelay);
      opts.onRetry?.({ attempt: attempt + 1, delayMs, method, url, reason: failure.message });
      await sleep(delayMs, init?.signal ?? null);
    }
  };
}

/** 250 ms doubling, with up to 50 % jitter, so many clients do not retry in step. */
function backoff(attempt: number): number {
  const base = 250 * 2 ** attempt;
  return Math.round(base * (0.5 + Math.random() * 0.5));
}

function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err);
}

export { retryAfterSeconds };
