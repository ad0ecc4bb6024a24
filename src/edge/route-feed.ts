import type { FastifyBaseLogger } from "fastify";
import { ReconnectingListener } from "../store/listener.js";

/**
 * One connection of the edge's own LISTENing on every route source's channel (kernel.all("edgeRoutes")), so every edge
 * process drops what it cached within a NOTIFY's delivery (milliseconds) of the committed change. Lost, it
 * reconnects every second; until then `live` is false and the caches hold nothing (kernel/change-feed.ts).
 */
export class RouteFeed {
  private readonly listener: ReconnectingListener;
  private readonly channels: readonly string[];
  /** started with no channel to hear: live until closed */
  private quiet = false;

  constructor(
    connectionString: string,
    channels: readonly string[],
    log: FastifyBaseLogger,
    /** channel null: everything may have changed */
    changed: (channel: string | null, payload: string) => void,
  ) {
    this.channels = channels;
    this.listener = new ReconnectingListener({
      connectionString,
      channels,
      log,
      lostMessage: "edge route listener lost; routes uncached until it reconnects",
      applicationName: "edge routes",
      onNotification: changed,
      // whatever changed while nobody listened
      onLive: () => changed(null, ""),
      onLost: () => changed(null, ""),
    });
  }

  /** listening now (or nothing to hear): the caches may keep routes */
  get live(): boolean {
    return this.quiet || this.listener.live;
  }

  async start(): Promise<void> {
    // nothing to hear: nothing is ever announced, routes only expire
    if (this.channels.length) await this.listener.start();
    else this.quiet = true;
  }

  close(): Promise<void> {
    this.quiet = false;
    return this.listener.close();
  }
}
