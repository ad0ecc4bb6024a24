import pg from "pg";
import type { FastifyBaseLogger } from "fastify";
import { listen } from "./db.js";

export interface ListenerOptions {
  connectionString: string;
  channels: readonly string[];
  log: FastifyBaseLogger;
  /** logged (once per outage) when a live listener is lost or the first connection fails */
  lostMessage: string;
  applicationName?: string;
  onNotification: (channel: string, payload: string) => void;
  /** listening (again): what changed while nobody listened was missed */
  onLive?: () => void;
  /** lost, or a connection attempt failed (also while closing): whatever the notifications kept fresh is stale */
  onLost?: () => void;
}

/**
 * One LISTEN connection of its own that reconnects: lost (an error, the connection ended, a failed attempt) it tries
 * again every second until closed. `live` says whether it hears the channels now: read caches kept fresh by its
 * notifications bypass themselves while it is false (auth/token-resolver.ts, kernel/change-feed.ts, edge/route-feed.ts).
 * A late event of a connection already replaced is ignored, and one retry at a time is pending.
 */
export class ReconnectingListener {
  live = false;
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  private warned = false;

  constructor(private readonly opts: ListenerOptions) {}

  async start(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.opts.connectionString,
      ...(this.opts.applicationName ? { application_name: this.opts.applicationName } : {}),
    });
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client, new Error("connection ended")));
    client.on("notification", (msg) => this.opts.onNotification(msg.channel, msg.payload ?? ""));
    try {
      await client.connect();
      for (const channel of this.opts.channels) await listen(client, channel);
      if (this.closed) {
        client.removeAllListeners();
        client.on("error", () => {});
        await client.end().catch(() => {});
        return;
      }
      this.client = client;
      this.live = true;
      this.warned = false;
      this.opts.onLive?.();
    } catch (err) {
      this.lost(client, err as Error);
    }
  }

  private lost(client: pg.Client, err: Error): void {
    if (this.client !== null && this.client !== client) return; // an old connection's late event
    this.live = false;
    this.client = null;
    client.removeAllListeners();
    client.on("error", () => {});
    client.end().catch(() => {});
    this.opts.onLost?.();
    if (this.closed || this.retry) return;
    if (!this.warned) this.opts.log.warn({ err: err.message }, this.opts.lostMessage);
    this.warned = true;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.start();
    }, 1000);
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    client?.removeAllListeners();
    client?.on("error", () => {});
    await client?.end().catch(() => {});
  }
}
