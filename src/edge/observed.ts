import type { IncomingMessage, ServerResponse } from "node:http";
import type { EdgeTarget } from "../kernel/area.js";
import type { EdgeObservation } from "./contract.js";
import { NGINX_TARGET_HEADER, nginxSecretOf } from "./headers.js";

/** An answer under observation: what `observe` gets once it finished (the response's 'finish'). */
export class Observed implements EdgeObservation {
  host = "";
  private routed: EdgeTarget | null = null;
  status = 0;
  ms = 0;
  bytes = 0;
  /** the connection's byte count before this answer */
  readonly written: number;
  readonly started = performance.now();
  readonly method: string | undefined; // references only: an access line is formatted later, off the request path
  readonly path: string | undefined;
  readonly userAgent: string | undefined;
  /** nginx's secret when nginx forwarded the request: nginx counts the answer, told its app by a header */
  private readonly nginx: string | undefined;

  constructor(
    req: IncomingMessage,
    /** the socket is kept: the upstream pool sets a request's `socket` to null once it streamed its body */
    readonly socket: IncomingMessage["socket"],
    readonly report: (o: EdgeObservation) => void,
    private readonly res: ServerResponse,
  ) {
    this.written = socket.bytesWritten;
    this.method = req.method;
    this.path = req.url;
    this.userAgent = req.headers["user-agent"];
    this.nginx = nginxSecretOf(req);
  }

  get viaNginx(): boolean {
    return this.nginx !== undefined;
  }

  get target(): EdgeTarget | null {
    return this.routed;
  }

  set target(t: EdgeTarget | null) {
    this.routed = t;
    if (t && this.nginx !== undefined && !this.res.headersSent)
      this.res.setHeader(NGINX_TARGET_HEADER, `${this.nginx} ${t.kind}:${t.id}`);
  }
}

export const OBSERVED = Symbol("edge observed");
export type ObservedResponse = ServerResponse & { [OBSERVED]?: Observed };

export function observe(req: IncomingMessage, res: ServerResponse, report: (o: EdgeObservation) => void): Observed {
  const seen = new Observed(req, req.socket, report, res);
  (res as ObservedResponse)[OBSERVED] = seen;
  res.on("finish", finished); // one shared listener, no closure per request
  return seen;
}

function finished(this: ObservedResponse): void {
  const seen = this[OBSERVED]!;
  seen.status = this.statusCode;
  seen.ms = performance.now() - seen.started;
  // a keep-alive connection answers one request at a time, so its counter's growth is this answer's size
  seen.bytes = Math.max(0, seen.socket.bytesWritten - seen.written);
  seen.report(seen);
}
