import type { FastifyBaseLogger } from "fastify";

type Level = "fatal" | "error" | "warn" | "info" | "debug" | "trace";
type Bindings = Record<string, unknown>;
type LogArgs = Parameters<FastifyBaseLogger["info"]>;
/** the app's logger is pino, which says whether a level is written */
const enabled = (logger: FastifyBaseLogger, level: string): boolean =>
  (logger as unknown as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled?.(level) ?? true;

/**
 * A request's logger, made only when the request logs something its level lets through. Fastify gives every
 * request a pino child bound to its id, and pino serialises the bindings as it makes one: a few microseconds per
 * request, for a logger that most requests (at the default level, every one below `warn`) never write to.
 * Lines that are written carry the same bindings (reqId) as the child Fastify would have made.
 */
export class LazyRequestLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly opts: Record<string, unknown>,
  ) {}

  private real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.opts));
  }

  private write(level: Level, args: LogArgs): void {
    if (this.made || enabled(this.parent, level)) (this.real()[level] as (...a: LogArgs) => void)(...args);
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(value: string) {
    this.real().level = value;
  }

  isLevelEnabled(level: string): boolean {
    return enabled(this.made ?? this.parent, level);
  }

  fatal(...args: LogArgs): void {
    this.write("fatal", args);
  }
  error(...args: LogArgs): void {
    this.write("error", args);
  }
  warn(...args: LogArgs): void {
    this.write("warn", args);
  }
  info(...args: LogArgs): void {
    this.write("info", args);
  }
  debug(...args: LogArgs): void {
    this.write("debug", args);
  }
  trace(...args: LogArgs): void {
    this.write("trace", args);
  }
  silent(): void {}

  child(bindings: Bindings, opts?: Record<string, unknown>): FastifyBaseLogger {
    return this.real().child(bindings, opts);
  }
}

/**
 * Fastify's childLoggerFactory option: a lazy child, unless the route gives its own serializers or a level other
 * than the parent's (Fastify passes the server's level along; the same level changes nothing).
 */
export const lazyChildLogger = (logger: FastifyBaseLogger, bindings: Bindings, opts: object): FastifyBaseLogger => {
  const { level, ...rest } = opts as { level?: string };
  if (Object.keys(rest).length || (level !== undefined && level !== logger.level)) return logger.child(bindings, opts);
  return new LazyRequestLogger(logger, bindings, opts as Record<string, unknown>) as unknown as FastifyBaseLogger;
};
