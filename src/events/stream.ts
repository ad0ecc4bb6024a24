import type { FastifyReply } from "fastify";
import type { Db } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import type { EventHub } from "./hub.js";
import { eventView, parseTypes, positionOf, visibleOwners } from "./service.js";
import * as repo from "./repo.js";

const BATCH = 500;
/** committed rows held behind a running transaction are read again this soon */
const HELD_RETRY_MS = 50;
const HEARTBEAT_MS = 15_000;

export interface StreamOptions {
  owner: Owner;
  type?: string;
  /** the Last-Event-ID header, or ?last_event_id= (EventSource cannot set headers on its first connection) */
  lastEventId?: string;
  /** a partner's stream of one child's events */
  childId?: string;
  /** the stream ends after this long; the client reconnects with Last-Event-ID (and its token is checked again) */
  maxMs: number;
}

/**
 * Server-Sent Events of one owner's events: first everything after Last-Event-ID (or only what comes next), then
 * live. Replay and live are one loop reading the store from the last position sent, woken by the hub, so nothing
 * falls between them and several API processes serve the same order.
 */
export async function streamEvents(db: Db, hub: EventHub, reply: FastifyReply, o: StreamOptions): Promise<void> {
  const types = parseTypes(o.type);
  const first = await visibleOwners(db, o.owner, o.childId);
  let pos = o.lastEventId ? await positionOf(db, first, o.lastEventId) : await repo.headPosition(db);
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.write("retry: 2000\n\n");
  let closed = false;
  let running = false;
  let again = false;
  let heldTimer: NodeJS.Timeout | null = null;

  const pump = async (): Promise<void> => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        // a partner's children are read again at every wake: one created meanwhile is streamed from its first event
        const owners = o.owner.kind === "account" ? await visibleOwners(db, o.owner, o.childId) : first;
        const { rows, held } = await repo.readAfter(db, owners, pos, BATCH, { types });
        if (closed) return;
        let chunk = "";
        for (const r of rows) chunk += `id: ${r.id}\nevent: ${r.type}\ndata: ${JSON.stringify(eventView(r))}\n\n`;
        if (rows.length) {
          pos = { tx: rows[rows.length - 1].tx, seq: rows[rows.length - 1].seq };
          res.write(chunk);
        }
        if (rows.length === BATCH) again = true;
        else if (held && !heldTimer)
          heldTimer = setTimeout(() => {
            heldTimer = null;
            void pump();
          }, HELD_RETRY_MS);
      } while (again && !closed);
    } catch (err) {
      reply.log.warn({ err }, "event stream read failed; closing it (the client resumes with Last-Event-ID)");
      finish();
    } finally {
      running = false;
    }
  };

  const unsubscribe = hub.subscribe(() => void pump());
  const heartbeat = setInterval(() => res.write(": ping\n\n"), HEARTBEAT_MS);
  const limit = setTimeout(() => finish(), o.maxMs);
  function finish() {
    if (closed) return;
    closed = true;
    unsubscribe();
    clearInterval(heartbeat);
    clearTimeout(limit);
    if (heldTimer) clearTimeout(heldTimer);
    res.end();
  }
  res.on("close", finish);
  await pump();
}
