import type { FastifyBaseLogger } from "fastify";
import { ReconnectingListener } from "../store/listener.js";

/**
 * One LISTEN connection per process on `platform_events` (the outbox's insert trigger), waking every subscriber
 * (live streams, the webhook dispatcher), which then read from the store by position: a notification carries
 * nothing, so a lost one costs at most the fallback tick. While the listener is down the tick wakes everyone.
 */
export class EventHub {
  private readonly subscribers = new Set<() => void>();
  private listener: ReconnectingListener | null = null;
  private tick: NodeJS.Timeout | null = null;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: FastifyBaseLogger,
    private readonly fallbackMs = 1000,
  ) {}

  /** Calls `wake` after every committed insert of events (any process), and every fallbackMs while not listening. */
  subscribe(wake: () => void): () => void {
    this.ensureStarted();
    this.subscribers.add(wake);
    return () => this.subscribers.delete(wake);
  }

  private wakeAll(): void {
    for (const s of this.subscribers) s();
  }

  private ensureStarted(): void {
    if (this.listener) return;
    this.listener = new ReconnectingListener({
      connectionString: this.databaseUrl,
      channels: ["platform_events"],
      log: this.log,
      lostMessage: "event listener lost; streams and webhooks fall back to polling",
      applicationName: "platform-events",
      onNotification: () => this.wakeAll(),
      onLive: () => this.wakeAll(),
    });
    void this.listener.start();
    this.tick = setInterval(() => {
      if (!this.listener?.live) this.wakeAll();
    }, this.fallbackMs);
    this.tick.unref();
  }

  async close(): Promise<void> {
    if (this.tick) clearInterval(this.tick);
    this.tick = null;
    this.subscribers.clear();
    await this.listener?.close();
    this.listener = null;
  }
}
