import pg from "pg";
import type { FastifyBaseLogger } from "fastify";
import { listen } from "../store/db.js";

/**
 * One connection of the edge's own LISTENing on every route source's channel (kernel.all("edgeRoutes")), so every edge
 * process drops what it cached within a NOTIFY's delivery (milliseconds) of the committed change. Lost, it
 * reconnects every second; until then `live` is false and the caches hold nothing (kernel/change-feed.ts).
 */
export class RouteFeed {
  private listener: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  live = false;

  constructor(
    private readonly connectionString: string,
    private readonly channels: readonly string[],
    private readonly log: FastifyBaseLogger,
    /** channel null: everything may have changed */
    private readonly changed: (channel: string | null, payload: string) => void,
  ) {}

  async start(): Promise<void> {
    if (this.closed) return;
    if (!this.channels.length) {
      this.live = true; // nothing to hear: nothing is ever announced, routes only expire
      return;
    }
    const client = new pg.Client({ connectionString: this.connectionString, application_name: "edge routes" });
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client, new Error("connection ended")));
    client.on("notification", (msg) => this.changed(msg.channel, msg.payload ?? ""));
    try {
      await client.connect();
      for (const channel of this.channels) await listen(client, channel);
      if (this.closed) {
        await client.end().catch(() => {});
        return;
      }
      this.listener = client;
      this.live = true;
      // whatever changed while nobody listened
      this.changed(null, "");
    } catch (err) {
      this.lost(client, err as Error);
    }
  }

  private lost(client: pg.Client, err: Error): void {
    if (this.listener !== null && this.listener !== client) return; // an old client's late event
    const wasLive = this.live;
    this.live = false;
    this.listener = null;
    client.removeAllListeners();
    client.on("error", () => {});
    client.end().catch(() => {});
    this.changed(null, "");
    if (this.closed || this.retry) return;
    if (wasLive) this.log.warn({ err: err.message }, "edge route listener lost; routes uncached until it reconnects");
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
    const client = this.listener;
    this.listener = null;
    client?.removeAllListeners();
    client?.on("error", () => {});
    await client?.end().catch(() => {});
  }
}
