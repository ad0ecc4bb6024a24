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
  private settled = false;

  constructor(
    readonly flight: Flight,
    readonly upstream: string,
    private readonly owner: AttemptOwner,
  ) {}

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
      this.flight.res.once("drain", () => controller.resume());
    }
  }

  onResponseEnd(): void {
    this.settled = true;
    this.flight.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.settled) return;
    this.settled = true;
    try {
      this.owner.failed(this, err);
    } catch {
      this.flight.res.destroy(); // never a visitor left waiting (the pool swallows a handler's exceptions)
    }
  }

  /** the visitor left: the upstream request is cut */
  abort(): void {
    this.controller?.abort(new errors.RequestAbortedError("the visitor left"));
  }
}
