import pg from "pg";
import type { FastifyBaseLogger } from "fastify";
import { listenForDesired } from "./repo.js";

/**
 * The agents' long polls in this API process: `GET /v1/agent/desired?wait=` parks here until the store announces a
 * change for its host (one LISTEN connection per process, opened at the first wait) or the wait ends. A lost
 * notification costs at most one wait, since every poll answers the current state when it ends.
 */
export class DesiredHub {
  private readonly waiters = new Map<string, Set<() => void>>();
  /** notifications seen per host: a poll compares it across its read of the state, so none falls in between */
  private readonly seen = new Map<string, number>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private stopped = false;

  /** shutting down: polls answer at once instead of waiting */
  get closed(): boolean {
    return this.stopped;
  }

  constructor(
    private readonly databaseUrl: string,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Listening (or given up on it): call before reading the state a wait will compare against. */
  ready(): Promise<void> {
    return this.listen();
  }

  /** How many notifications this process saw for the host (pass it to wait). */
  mark(hostId: string): number {
    return this.seen.get(hostId) ?? 0;
  }

  private listen(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.databaseUrl });
      client.on("notification", (n) => this.wake(n.payload ?? ""));
      client.on("error", (err) => {
        this.log.warn({ err }, "agent long-poll listener lost; polls fall back to their wait time");
        if (this.client === client) this.client = null;
        this.wakeAll(); // polls answer now and come back, re-opening the listener
      });
      await client.connect();
      await listenForDesired(client);
      if (this.closed) await client.end().catch(() => {});
      else this.client = client;
    })()
      .catch((err) => this.log.warn({ err }, "agent long-poll listener not started; polls use their wait time"))
      .finally(() => (this.connecting = null));
    return this.connecting;
  }

  /** Resolves when the host's desired state may have changed since `mark`, after `ms`, or at shutdown. */
  async wait(hostId: string, ms: number, mark: number): Promise<void> {
    await this.listen();
    if (this.closed || this.mark(hostId) !== mark) return;
    await new Promise<void>((resolve) => {
      const set = this.waiters.get(hostId) ?? new Set();
      this.waiters.set(hostId, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (!set.size && this.waiters.get(hostId) === set) this.waiters.delete(hostId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
    });
  }

  /** Wakes the host's polls (a change seen by this process, or the host deleted). */
  wake(hostId: string): void {
    this.seen.set(hostId, this.mark(hostId) + 1);
    for (const done of [...(this.waiters.get(hostId) ?? [])]) done();
  }

  private wakeAll(): void {
    for (const id of new Set([...this.waiters.keys(), ...this.seen.keys()])) this.wake(id);
  }

  /** At shutdown (before the server waits for open requests): every poll answers at once. */
  async close(): Promise<void> {
    this.stopped = true;
    this.wakeAll();
    await this.connecting;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
