/**
 * Scale-to-zero's side of the provider contract (issue 30), apart from DatabaseProvider: a provider that can
 * count an instance's client sessions and listen in its server's place while it is idle-stopped.
 */

/** How a wake ended for the connections waiting on it: started (they are piped to the server), or why not. */
export type WakeOutcome = { ok: true } | { ok: false; message: string };

/** Starts the instance for a connection that arrived while it was idle-stopped (the platform's idle service). */
export type WakeHandler = (id: string) => Promise<WakeOutcome>;

export interface WakeCapable {
  /** Client sessions open now: direct ones and the pooler's clients (the platform's own and the pooler's server links left out). */
  clientSessions(id: string): Promise<number>;
  /** Listens on the instance's ports in its stopped server's place; false when a port is taken. */
  holdForWake(id: string): Promise<boolean>;
  /** Gives the instance's ports back (this process only); connections already taken keep waiting. */
  releaseWakeFront(id: string): Promise<void>;
  /** The instances this process holds fronts for. */
  heldWakeFronts(): string[];
  setWakeHandler(handler: WakeHandler | null): void;
}

export function isWakeCapable(p: unknown): p is WakeCapable {
  return typeof (p as Partial<WakeCapable>)?.holdForWake === "function";
}
