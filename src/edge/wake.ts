import type { FastifyBaseLogger } from "fastify";
import type { EdgeTarget } from "../kernel/area.js";
import type { EdgeWakeOutcome } from "../apps/contract.js";
import type { RouteCache } from "./route-cache.js";
import { pages, type EdgePage } from "./pages.js";

export interface WakeOptions {
  /** kernel.use("edgeWake"): the apps area's start with admission (null: no area wakes anything, 503) */
  wake: ((target: { kind: string; id: string }) => Promise<EdgeWakeOutcome>) | null;
  /** EDGE_WAKE_TIMEOUT_MS: how long a held request waits for a replica */
  timeoutMs: number;
  log: FastifyBaseLogger;
}

/** how often a wait asks the store again without a NOTIFY (a lost one, or a listener reconnecting) */
const POLL_MS = 1000;
/** wakes one wait asks for at most (again only when a fresh read finds the app stopped once more) */
const MAX_ASKS = 3;

/**
 * Scale-to-zero at the edge (issue 30): a request for an idle-stopped app (EdgeTarget.idle) is held while the app
 * starts, then answered by the fresh replica. Every request of one process waiting for one app shares one wait, and
 * the wake itself is recorded in the store by the apps area (kernel `edgeWake`, idempotent under the row's lock),
 * so any number of concurrent first requests on any number of edge processes make exactly one start (a fresh read
 * that finds the app stopped again after the wake asks again, a few times at most). The wait
 * ends on the route feed's NOTIFY (the replica became ready: `pod_routes`), or a poll every second; past
 * `timeoutMs` it answers 503 with Retry-After. A refusal by admission answers its message and starts nothing.
 */
export class Waker {
  private readonly waits = new Map<string, Promise<{ target: EdgeTarget } | { page: EdgePage }>>();
  private readonly pokes = new Set<() => void>();
  /** wakes asked of the apps area by this process (tests, the benchmark) */
  asked = 0;

  constructor(
    private readonly routes: RouteCache,
    private readonly opts: WakeOptions,
  ) {}

  /** A route may have changed (the feed heard a NOTIFY or reconnected): every wait looks again. */
  poke(): void {
    for (const poke of [...this.pokes]) poke();
  }

  /** The target with a ready replica once the app is up, or the page to answer instead. */
  ready(host: string, target: EdgeTarget): Promise<{ target: EdgeTarget } | { page: EdgePage }> {
    const key = `${target.kind}:${target.id}`;
    let wait = this.waits.get(key);
    if (!wait) {
      wait = this.wakeAndWait(host, target).finally(() => this.waits.delete(key));
      this.waits.set(key, wait);
    }
    return wait;
  }

  private async wakeAndWait(host: string, target: EdgeTarget): Promise<{ target: EdgeTarget } | { page: EdgePage }> {
    const deadline = Date.now() + this.opts.timeoutMs;
    let asks = 0;
    let current: EdgeTarget | null = target;
    for (;;) {
      if (current?.upstreams.length && current.idle !== "stopped") return { target: current };
      if (!current) return { page: pages.unknownHost() }; // deleted meanwhile
      if (current.idle === "stopped") {
        // the first read may come from the cache (another process may have woken it: the wake then finds it under
        // way); later ones are fresh, so "stopped" after our wake means stopped once more (an idle sweep that did
        // not see the held requests yet): asked again rather than left to time out, a few times at most
        if (!this.opts.wake || asks >= MAX_ASKS) return { page: pages.wakeFailed() };
        asks++;
        this.asked++;
        const outcome = await this.opts.wake({ kind: current.kind, id: current.id });
        if (outcome.kind === "refused") return { page: pages.wakeRefused(outcome.status, outcome.message) };
        if (outcome.kind === "gone") return { page: pages.unknownHost() };
      } else if (!current.idle && !current.upstreams.length) {
        // neither asleep, starting nor serving: stopped by its owner meanwhile, or its start failed
        return { page: pages.wakeFailed() };
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        this.opts.log.warn({ host, target: `${target.kind}:${target.id}` }, "edge wake: no replica in time");
        return { page: pages.wakeFailed() };
      }
      await this.changed(Math.min(left, POLL_MS));
      current = (await this.routes.get(host, true)).target;
    }
  }

  /** resolves on the next poke or after `ms` */
  private changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.pokes.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.pokes.add(done);
    });
  }
}
