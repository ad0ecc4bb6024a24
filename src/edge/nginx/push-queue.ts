/**
 * Lines for one of nginx's admin locations (/routes, /sites, /access), sent one call at a time and in order, so a
 * delete never overtakes the set before it; lines queued while a call is under way go together in the next one.
 * A call that fails (nginx down, restarting or slow) calls `lost`: the owner forgets what it believes nginx holds
 * and pushes again as hosts resolve.
 */
export class AdminPushQueue {
  private queue: string[] = [];
  private sending: Promise<void> | null = null;

  constructor(
    private readonly post: (body: string) => Promise<string | null>,
    private readonly lost: (lines: number) => void,
  ) {}

  send(line: string): void {
    this.queue.push(line);
    if (!this.sending) this.sending = this.drain();
  }

  /** resolves once every line queued so far reached nginx (or was lost) */
  async settled(): Promise<void> {
    while (this.sending) await this.sending;
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const lines = this.queue;
      this.queue = [];
      const ok = await this.post(lines.join("\n")).then(
        (r) => r !== null,
        () => false,
      );
      if (!ok) this.lost(lines.length);
    }
    this.sending = null;
  }
}
