import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";
import { platformFetch, type TransportOptions } from "./transport.js";
import { PlatformOperationError } from "./errors.js";

export type Database = paths["/v1/databases/{id}"]["get"]["responses"][200]["content"]["application/json"];
export type DatabaseCommand = NonNullable<Database["commands"]>[number];
export type { components, paths };

export type PlatformClientOptions = TransportOptions;

/** What a list endpoint with cursor paging answers. */
export interface Page<T> {
  items: T[];
  next_cursor?: string | null;
}

export interface WaitOptions {
  /** give up after this many milliseconds (default 10 minutes) */
  timeoutMs?: number;
  /** first delay between polls (default 500 ms, growing to 5 s) */
  intervalMs?: number;
  /** called with each state seen, for progress display */
  onPoll?: (state: { status: string; database: Database }) => void;
  signal?: AbortSignal;
}

export interface PlatformClient {
  /** the typed client: `api.GET("/v1/databases/{id}", { params: { path: { id } } })`; failures throw */
  api: Client<paths>;
  /** the fetch underneath (auth, retries, Idempotency-Key), for calls outside the typed paths */
  fetch: (input: Request | string | URL, init?: RequestInit) => Promise<Response>;
  baseUrl: string;
  /** an untyped call by method and path: parsed JSON, text for text answers, null for 204 */
  request(
    method: string,
    path: string,
    init?: { query?: Record<string, unknown>; body?: unknown; headers?: Record<string, string> },
  ): Promise<unknown>;
  /** every item of a cursor-paged list, page after page */
  paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T>;
  /** polls GET /v1/databases/{id} until the command finished; throws PlatformOperationError if it failed */
  waitForCommand(databaseId: string, commandId: string, opts?: WaitOptions): Promise<Database>;
  /** polls until the database is in one of the states (e.g. running after create); fails on `failed` */
  waitForDatabaseState(databaseId: string, states: string[], opts?: WaitOptions): Promise<Database>;
}

/** The data of an openapi-fetch result (its errors were already thrown by the transport). */
export async function unwrap<T>(result: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data } = await result;
  return data as T;
}

export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetcher = platformFetch({ ...options, baseUrl });
  const api = createClient<paths>({ baseUrl, fetch: (req: Request) => fetcher(req) });

  const request: PlatformClient["request"] = async (method, path, init = {}) => {
    const url = new URL(baseUrl + path);
    for (const [k, v] of Object.entries(init.query ?? {})) {
      if (v === undefined || v === null) continue;
      for (const item of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(item));
    }
    const headers: Record<string, string> = { accept: "application/json", ...init.headers };
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (init.body instanceof Uint8Array) {
      // a raw upload (archives): sent as is, with the media type the caller named
      headers["content-type"] ??= "application/octet-stream";
      body = new Uint8Array(init.body);
    } else if (init.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(init.body);
    }
    const response = await fetcher(url, { method: method.toUpperCase(), headers, body });
    if (response.status === 204) return null;
    const type = response.headers.get("content-type") ?? "";
    return type.includes("json") ? response.json() : response.text();
  };

  async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
    let cursor: string | undefined;
    for (;;) {
      const page = await fetchPage(cursor);
      yield* page.items;
      if (!page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  const getDatabase = (id: string) => unwrap(api.GET("/v1/databases/{id}", { params: { path: { id } } }));

  async function poll(
    databaseId: string,
    opts: WaitOptions,
    done: (db: Database) => { status: string; finished: boolean },
  ): Promise<Database> {
    const deadline = Date.now() + (opts.timeoutMs ?? 600_000);
    let interval = opts.intervalMs ?? 500;
    for (;;) {
      const database = await getDatabase(databaseId);
      const state = done(database);
      opts.onPoll?.({ status: state.status, database });
      if (state.finished) return database;
      if (Date.now() + interval > deadline)
        throw new PlatformOperationError(
          `still ${state.status} after ${Math.round((opts.timeoutMs ?? 600_000) / 1000)} s`,
          null,
          true,
        );
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, interval);
        opts.signal?.addEventListener("abort", () => (clearTimeout(t), reject(opts.signal!.reason)), { once: true });
      });
      interval = Math.min(5000, Math.round(interval * 1.5));
    }
  }

  return {
    api,
    fetch: fetcher,
    baseUrl,
    request,
    paginate,
    async waitForCommand(databaseId, commandId, opts = {}) {
      let failed: DatabaseCommand | undefined;
      const database = await poll(databaseId, opts, (db) => {
        const cmd = (db.commands ?? []).find((c) => c.id === commandId);
        if (cmd?.status === "failed") failed = cmd;
        return { status: cmd?.status ?? "queued", finished: cmd?.status === "succeeded" || cmd?.status === "failed" };
      });
      if (failed)
        throw new PlatformOperationError(`${failed.kind} failed: ${failed.error ?? "no reason given"}`, commandId);
      return database;
    },
    async waitForDatabaseState(databaseId, states, opts = {}) {
      const database = await poll(databaseId, opts, (db) => ({
        status: db.state,
        finished: states.includes(db.state) || db.state === "failed",
      }));
      if (database.state === "failed" && !states.includes("failed")) {
        throw new PlatformOperationError(
          `database ${database.slug ?? database.id} failed: ${database.status_reason ?? "no reason given"}`,
          null,
        );
      }
      return database;
    },
  };
}
