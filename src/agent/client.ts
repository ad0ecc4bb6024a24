import type { DesiredState, RegisterRequest, RegisterResponse, ReportRequest, ReportResponse } from "./protocol.js";

/** A refusal by the control plane (status and its error code); 401 means the credential or token is not valid. */
export class PlatformError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The agent's HTTPS calls to the control plane (PLATFORM_URL); nothing else leaves the machine. */
export class PlatformClient {
  credential: string | null = null;

  constructor(private readonly baseUrl: string) {}

  private async call<T>(
    method: "GET" | "POST",
    path: string,
    opts: { body?: unknown; timeoutMs?: number; signal?: AbortSignal; bearer?: string } = {},
  ): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    const bearer = opts.bearer ?? this.credential;
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? 15_000);
    const res = await fetch(this.baseUrl + path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout,
    });
    const text = await res.text();
    let json: { error?: { code?: string; message?: string } } | null = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // a proxy's page, not the platform's answer
    }
    if (!res.ok)
      throw new PlatformError(
        res.status,
        json?.error?.code ?? "http_error",
        json?.error?.message ?? text.slice(0, 200),
      );
    return json as T;
  }

  /** with the one-time bootstrap token as the bearer; afterwards `credential` is the agent's own */
  register(bootstrapToken: string, body: RegisterRequest): Promise<RegisterResponse> {
    return this.call("POST", "/v1/agent/register", { body, bearer: bootstrapToken });
  }

  /** the long poll: waits up to `waitS` for a version other than `version` */
  desired(version: string | undefined, waitS: number, signal?: AbortSignal): Promise<DesiredState> {
    const q = new URLSearchParams({ wait: String(waitS) });
    if (version) q.set("version", version);
    return this.call("GET", `/v1/agent/desired?${q}`, { timeoutMs: (waitS + 15) * 1000, signal });
  }

  report(body: ReportRequest): Promise<ReportResponse> {
    return this.call("POST", "/v1/agent/report", { body });
  }
}
