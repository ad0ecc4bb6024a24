import type { FastifyBaseLogger } from "fastify";
import { inTransaction, type Db } from "../store/db.js";
import type { SecretBox } from "../kernel/secrets.js";
import { ownerKey } from "../kernel/owner.js";
import type { LogLine, RuntimeProvider } from "../runtime/provider.js";
import type { Outbound } from "../net/outbound.js";
import { podLogMasker, podsForDrains, type PodLogSource } from "../apps/public.js";
import { parseDestination } from "./destination.js";
import { sendBatch, type DrainRecord } from "./sender.js";
import * as repo from "./repo.js";

export interface ShipperConfig {
  /** how often this process looks for lines to ship */
  pollMs: number;
  /** a pod's line is shipped once it is this old, so a line stamped earlier but written late never falls behind the cursor */
  settleMs: number;
  batchLines: number;
  batchBytes: number;
  /** batches one drain sends per pass at most, before others get their turn */
  batchesPerPass: number;
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** lines older than this when their turn comes are dropped (counted), so a dead drain holds nothing forever */
  maxLagMs: number;
  /** a sender's hold on a cursor; one killed mid-batch is replaced after it lapses and the batch is sent again */
  claimSeconds: number;
  /** drains worked on at once in this process: a slow one holds only its own turn */
  concurrency: number;
}

export interface ShipperDeps {
  db: Db;
  runtime: RuntimeProvider | null;
  hostId: string;
  outbound: Outbound;
  secrets: SecretBox;
  log: FastifyBaseLogger;
  config: ShipperConfig;
}

const MS = 1_000_000n;
type ContainersOf = (podId: string) => Promise<string[]>;

/** ns since the epoch as RFC 3339 with nanoseconds (UTC). */
export function nsTime(ns: bigint): string {
  const iso = new Date(Number(ns / MS)).toISOString().slice(0, 19);
  return `${iso}.${String(ns % 1_000_000_000n).padStart(9, "0")}Z`;
}

/** Where a cursor stands after a line: its time, and how many lines of exactly that time are behind it. */
function advance(pos: { ns: bigint; count: number }, line: { ns: bigint }): void {
  if (line.ns === pos.ns) pos.count++;
  else {
    pos.ns = line.ns;
    pos.count = 1;
  }
}

/** One failure more: the next attempt after base × 2^(failures before), at most the maximum, ±10%. */
export function backoffMs(c: ShipperConfig, failuresBefore: number): number {
  const base = Math.min(c.retryMaxMs, c.retryBaseMs * 2 ** Math.min(30, failuresBefore));
  return Math.round(base * (0.9 + Math.random() * 0.2));
}

function edgeRecord(row: repo.EdgeLineRow): DrainRecord {
  const l = row.line as Record<string, string | number | null>;
  const ua = l.user_agent ? ` "${String(l.user_agent)}"` : "";
  return {
    time: row.at.toISOString(),
    source: "edge",
    hostname: String(l.host ?? "-"),
    procId: String(l.app_id ?? "-"),
    stream: "access",
    message: `${l.remote_addr ?? "-"} "${l.method} ${l.path}" ${l.status} ${l.bytes} ${l.duration_ms}ms${ua}`,
    fields: l,
  };
}

/**
 * Ships drains' lines from this process (hosts with the worker role): the output of the pods placed on this host
 * (read from the runtime after each drain's cursor) and the edge's access lines (from drain_edge_lines). A cursor
 * moves only after its batch was taken, in the transaction that counts it delivered: at least once.
 */
export class DrainShipper {
  private readonly inFlight = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private lastPrune = 0;
  /** false where the runtime cannot run here (no podman): pod drains are left to the hosts that run pods */
  podsReadable = true;

  constructor(private readonly d: ShipperDeps) {}

  start(): void {
    this.timer = setInterval(() => {
      this.pass().catch((err) => this.d.log.warn({ err }, "log drains: a pass failed; the next one retries"));
    }, this.d.config.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass: every due drain not already being worked on here gets a turn; resolves when the turns end. */
  async pass(now = Date.now()): Promise<void> {
    const c = this.d.config;
    const due = (d: repo.DrainRow) =>
      !this.inFlight.has(d.id) && (!d.next_attempt_at || d.next_attempt_at.getTime() <= now);
    const podDrains =
      this.podsReadable && this.d.runtime?.logLines ? (await repo.activeDrains(this.d.db, "pods")).filter(due) : [];
    const edgeDrains = (await repo.activeDrains(this.d.db, "edge")).filter(due);
    const pods = podDrains.length
      ? await podsForDrains(this.d.db, this.d.hostId, [
          ...new Set(podDrains.map((d) => ownerKey({ kind: d.owner_kind, id: d.owner_id }))),
        ])
      : [];
    const turns: Promise<void>[] = [];
    const take = (d: repo.DrainRow, work: () => Promise<void>) => {
      if (this.inFlight.size >= c.concurrency) return;
      this.inFlight.add(d.id);
      turns.push(
        work()
          .catch((err) => this.d.log.warn({ err, drain: d.id }, "log drain turn failed"))
          .finally(() => this.inFlight.delete(d.id)),
      );
    };
    // a pod's containers are listed once per pass, whatever number of drains ship it
    const listed = new Map<string, Promise<string[]>>();
    const containersOf = (podId: string) => {
      let names = listed.get(podId);
      if (!names) {
        names = this.d.runtime!.list({ "platform.pod": podId }).then((cs) => cs.map((k) => k.name).sort());
        listed.set(podId, names);
      }
      return names;
    };
    for (const d of podDrains) {
      const mine = pods.filter((p) => matchesPod(d, p));
      if (mine.length) take(d, () => this.shipPods(d, mine, containersOf));
    }
    for (const d of edgeDrains) take(d, () => this.shipEdge(d));
    if (now - this.lastPrune > 60_000) {
      this.lastPrune = now;
      // a minute past the lag bound: every drain has shipped or counted these by then
      await repo.pruneEdgeLines(this.d.db, new Date(now - c.maxLagMs - 60_000));
    }
    await Promise.all(turns);
  }

  private headers(d: repo.DrainRow): Record<string, string> {
    return d.headers_sealed
      ? (JSON.parse(this.d.secrets.open(d.headers_sealed, repo.HEADERS_COLUMN)) as Record<string, string>)
      : {};
  }

  /** Sends a batch; on failure counts it on the drain with its back-off and answers false. */
  private async send(d: repo.DrainRow, records: DrainRecord[]): Promise<boolean> {
    try {
      await sendBatch(this.d.outbound, parseDestination(d.destination), records, {
        headers: this.headers(d),
        timeoutMs: this.d.config.timeoutMs,
      });
      return true;
    } catch (err) {
      const message = (err as Error).message;
      await repo.recordFailure(this.d.db, d.id, message, backoffMs(this.d.config, d.failures_in_row));
      return false;
    }
  }

  private async shipPods(d: repo.DrainRow, pods: PodLogSource[], containersOf: ContainersOf): Promise<void> {
    for (const pod of pods) if (!(await this.shipPod(d, pod, containersOf))) return;
  }

  /** One pod's lines after the drain's cursor; false when the destination failed (the drain waits its back-off). */
  private async shipPod(d: repo.DrainRow, pod: PodLogSource, containersOf: ContainersOf): Promise<boolean> {
    const c = this.d.config;
    const runtime = this.d.runtime!;
    const cur = await repo.claimCursor(this.d.db, d.id, pod.id, c.claimSeconds, BigInt(d.created_at.getTime()) * MS);
    if (!cur) return true; // another sender holds it
    try {
      const nowNs = BigInt(Date.now()) * MS;
      const pos = { ns: BigInt(cur.at_ns), count: cur.at_count };
      const untilNs = nowNs - BigInt(c.settleMs) * MS;
      if (untilNs <= pos.ns) return true;
      let lines: LogLine[] = [];
      // from a nanosecond before the cursor: lines of exactly its time come again and the first `count` are skipped
      for (const name of await containersOf(pod.id))
        lines.push(...(await runtime.logLines!(name, pos.ns - 1n, untilNs)));
      lines.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
      let skip = pos.count;
      lines = lines.filter((l) => !(l.ns === pos.ns && skip-- > 0));
      const cutoff = nowNs - BigInt(c.maxLagMs) * MS;
      let stale = 0;
      while (stale < lines.length && lines[stale].ns < cutoff) advance(pos, lines[stale++]);
      if (stale) {
        await inTransaction(this.d.db, async (tx) => {
          await repo.movePodCursor(tx, d.id, pod.id, pos.ns, pos.count);
          await repo.addDropped(tx, d.id, stale);
        });
        lines = lines.slice(stale);
      }
      const mask = podLogMasker(this.d.secrets, pod.envSealed);
      for (let b = 0; b < c.batchesPerPass && lines.length; b++) {
        let bytes = 0;
        let n = 0;
        while (n < lines.length && n < c.batchLines && bytes < c.batchBytes) bytes += lines[n++].text.length + 100;
        const batch = lines.slice(0, n);
        const records = batch.map((l): DrainRecord => ({
          time: nsTime(l.ns),
          source: "pod",
          hostname: pod.slug,
          procId: pod.id,
          stream: l.stream,
          message: mask(l.text),
          fields: { source: "pod", pod_id: pod.id, pod: pod.slug, group_id: pod.groupId, stream: l.stream },
        }));
        if (!(await this.send(d, records))) return false;
        for (const l of batch) advance(pos, l);
        await inTransaction(this.d.db, async (tx) => {
          await repo.movePodCursor(tx, d.id, pod.id, pos.ns, pos.count);
          await repo.recordSuccess(tx, d.id, batch.length);
        });
        lines = lines.slice(n);
      }
      return true;
    } finally {
      await repo.releaseCursor(this.d.db, d.id, pod.id);
    }
  }

  /** The edge's lines for the drain after its cursor. */
  private async shipEdge(d: repo.DrainRow): Promise<void> {
    const c = this.d.config;
    const cur = await repo.claimCursor(this.d.db, d.id, "edge", c.claimSeconds, 0n);
    if (!cur) return;
    try {
      let pos = { tx: cur.edge_tx, seq: cur.edge_seq };
      const stale = await repo.staleEdgeLines(this.d.db, d, pos, new Date(Date.now() - c.maxLagMs));
      if (stale) {
        pos = { tx: stale.tx, seq: stale.seq };
        await inTransaction(this.d.db, async (tx) => {
          await repo.moveEdgeCursor(tx, d.id, pos.tx, pos.seq);
          await repo.addDropped(tx, d.id, stale.n);
        });
      }
      for (let b = 0; b < c.batchesPerPass; b++) {
        const rows = await repo.readEdgeLines(this.d.db, d, pos, c.batchLines);
        if (!rows.length) return;
        if (!(await this.send(d, rows.map(edgeRecord)))) return;
        const last = rows[rows.length - 1];
        pos = { tx: last.tx, seq: last.seq };
        await inTransaction(this.d.db, async (tx) => {
          await repo.moveEdgeCursor(tx, d.id, pos.tx, pos.seq);
          await repo.recordSuccess(tx, d.id, rows.length);
        });
        if (rows.length < c.batchLines) return;
      }
    } finally {
      await repo.releaseCursor(this.d.db, d.id, "edge");
    }
  }
}

/** Whether a pod's output belongs to a drain: the drain's owner, and its pod or group when it names one. */
function matchesPod(d: repo.DrainRow, p: PodLogSource): boolean {
  if (p.owner.kind !== d.owner_kind || p.owner.id !== d.owner_id) return false;
  if (!d.target_id) return true;
  return d.target_kind === "group" ? p.groupId === d.target_id : p.id === d.target_id;
}
