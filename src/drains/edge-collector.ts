import type { FastifyBaseLogger } from "fastify";
import { inTransaction, type Db } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import type { EdgeTarget } from "../kernel/area.js";
import type { EdgeAccessLogSink, EdgeObservation } from "../edge/contract.js";
import * as repo from "./repo.js";

export interface CollectorConfig {
  /** how often the lines go to the store (and the subscriptions are read again) */
  flushMs: number;
  /** lines held per app between flushes at most; beyond, lines are dropped and counted on the app's drains */
  bufferLines: number;
}

interface Buffer {
  kind: string;
  id: string;
  owner: Owner;
  lines: repo.EdgeLine[];
  dropped: number;
}

/**
 * The edge's half of log drains, in processes with the edge role: each answered request of an app some drain
 * subscribes to becomes one line in a bounded in-memory buffer per app (a Set lookup and an array push on the
 * request path; nothing is awaited there), and every `flushMs` all buffers go to the store in one statement, from
 * which the shippers send them. A full buffer drops the line and counts it on the app's drains; a failed flush
 * keeps what fits for the next one. A kill -9 of the edge loses at most one flush interval of lines.
 */
export class EdgeLineCollector implements EdgeAccessLogSink {
  private targets = new Set<string>();
  private owners = new Set<string>();
  private readonly changed: (() => void)[] = [];
  private buffers = new Map<string, Buffer>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  /** set once the edge runs here: other processes' edges never call record */
  active = false;

  constructor(
    private readonly db: Db,
    private readonly config: CollectorConfig,
    private readonly log: FastifyBaseLogger,
  ) {}

  record(o: EdgeObservation): void {
    const t = o.target;
    if (!t || !this.active) return;
    if (!this.targets.has(t.id) && !this.owners.has(t.owner.id)) return;
    let b = this.buffers.get(t.id);
    if (!b) this.buffers.set(t.id, (b = { kind: t.kind, id: t.id, owner: t.owner, lines: [], dropped: 0 }));
    if (b.lines.length >= this.config.bufferLines) {
      b.dropped++;
      return;
    }
    b.lines.push({
      targetKind: t.kind,
      targetId: t.id,
      owner: t.owner,
      at: new Date(),
      line: {
        source: "edge",
        app_kind: t.kind,
        app_id: t.id,
        host: o.host,
        method: o.method ?? null,
        path: o.path ?? null,
        status: o.status,
        duration_ms: Math.round(o.ms * 10) / 10,
        bytes: o.bytes,
        remote_addr: o.socket?.remoteAddress ?? null,
        user_agent: o.userAgent ?? null,
      },
    });
  }

  async start(): Promise<void> {
    this.active = true;
    await this.refresh();
    this.timer = setInterval(() => void this.flush(), this.config.flushMs);
    this.timer.unref();
  }

  /** whether this target's access lines are wanted (the nginx data plane leaves them to the Node edge) */
  wants(t: EdgeTarget): boolean {
    return this.active && (this.targets.has(t.id) || this.owners.has(t.owner.id));
  }

  onChange(listener: () => void): void {
    this.changed.push(listener);
  }

  private async refresh(): Promise<void> {
    try {
      const s = await repo.edgeSubscriptions(this.db);
      const [targets, owners] = [new Set(s.targets), new Set(s.owners)];
      const same = (a: Set<string>, b: Set<string>) => a.size === b.size && [...b].every((x) => a.has(x));
      const changed = !same(this.targets, targets) || !same(this.owners, owners);
      this.targets = targets;
      this.owners = owners;
      if (changed) for (const listener of this.changed) listener();
    } catch (err) {
      this.log.warn({ err }, "log drains: the edge's subscriptions were not read; the last ones stay");
    }
  }

  /** Writes what is held (never rejects), then reads the subscriptions again. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.flushing = this.write().finally(() => (this.flushing = null));
    await this.flushing;
  }

  private async write(): Promise<void> {
    const held = this.buffers;
    this.buffers = new Map();
    const lines = [...held.values()].flatMap((b) => b.lines);
    const drops = [...held.values()]
      .filter((b) => b.dropped > 0)
      .map((b) => ({ targetId: b.id, ownerKind: b.owner.kind, ownerId: b.owner.id, n: b.dropped }));
    if (lines.length || drops.length) {
      try {
        await inTransaction(this.db, async (tx) => {
          await repo.insertEdgeLines(tx, lines);
          await repo.addEdgeDropped(tx, drops);
        });
      } catch (err) {
        this.log.warn(
          { err, lines: lines.length },
          "log drains: the edge's lines were not stored; kept for the next flush",
        );
        for (const b of held.values()) {
          const now = this.buffers.get(b.id);
          if (!now) this.buffers.set(b.id, b);
          else {
            // the newest held lines that fit go before what arrived since; the rest is dropped and counted
            const room = Math.max(0, this.config.bufferLines - now.lines.length);
            const kept = b.lines.slice(Math.max(0, b.lines.length - room));
            now.dropped += b.dropped + (b.lines.length - kept.length);
            now.lines = [...kept, ...now.lines];
          }
        }
      }
    }
    await this.refresh();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.active) await this.flush();
    this.active = false;
  }
}
