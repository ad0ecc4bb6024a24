import type { IncomingMessage, ServerResponse } from "node:http";
import { errors, type Dispatcher } from "undici";
import type { EdgeTarget } from "../kernel/area.js";
import { prepareAnswerHeaders } from "./headers.js";

/** One request on its way to an upstream: where it was routed, what was tried, whether it may be sent again. */
export class Flight {
  readonly tried = new Set<string>();
  /** the attempt under way (null between attempts and once settled) */
  current: Attempt | null = null;
  /** the visitor's connection closed before the answer was complete */
  gone = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly host: string,
    public target: EdgeTarget,
    /** GET/HEAD without a body: may be sent to another replica when the first failed before answering */
    readonly replay: boolean,
    /** the request has a body, streamed to the upstream as it arrives */
    readonly body: boolean,
  ) {}
}

/** What an attempt needs of the proxy that made it. */
export interface AttemptOwner {
  /** the edge is shutting down: answers close their connection */
  readonly closing: boolean;
  readonly upstreamTimeoutMs: number;
  /** the attempt failed (before or after its answer started) */
  failed(attempt: Attempt, err: Error): void;
}

/**
 * One try of a flight on one upstream, as an undici dispatch handler: the answer's status and headers go to the
 * visitor as they arrive, then its body chunk by chunk (the upstream is paused while the visitor's socket is
 * full). Any error, before or after the answer started, goes to the owner once.
 */
export class Attempt implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private timer: NodeJS.Timeout | null = null;
  private settled = false;
  private answered = false;

  constructor(
    readonly flight: Flight,
    readonly upstream: string,
    private readonly owner: AttemptOwner,
  ) {
    // a request with a body has no headers timeout in the pool (an upload may take longer than it): the upstream's
    // silence is timed here from the moment the whole body went through
    if (flight.body) flight.req.once("end", this.startTimer);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.flight.gone) controller.abort(new errors.RequestAbortedError("the visitor left"));
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    statusMessage?: string,
  ): void {
    if (statusCode < 200) return; // informational answers (103) are not relayed
    this.answered = true;
    this.clearTimer();
    const res = this.flight.res;
    prepareAnswerHeaders(headers, !this.owner.closing && res.shouldKeepAlive);
    try {
      res.writeHead(statusCode, statusMessage || undefined, headers);
    } catch (err) {
      controller.abort(err as Error); // a header node refuses to send: nothing went out, a 502 page does
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.flight.res.write(chunk)) {
      controller.pause();
      this.flight.res.once("drain", this.resume);
    }
  }

  onResponseEnd(): void {
    this.settled = true;
    this.flight.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.clearTimer();
    if (this.settled) return;
    this.settled = true;
    this.owner.failed(this, err);
  }

  /** the visitor left: the upstream request is cut */
  abort(): void {
    this.controller?.abort(new errors.RequestAbortedError("the visitor left"));
  }

  private readonly resume = (): void => this.controller?.resume();

  private readonly startTimer = (): void => {
    if (this.settled || this.answered || this.timer) return;
    this.timer = setTimeout(
      () => this.controller?.abort(new errors.HeadersTimeoutError()),
      this.owner.upstreamTimeoutMs,
    );
    this.timer.unref();
  };

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
