import path from "node:path";

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  baseDomain: string;
  internalDomain: string;
  operatorToken: string | null;
  fleetToken: string | null;
  signup: "open" | "closed";
  redisUrl: string | null;
  logLevel: string;
  edition: "saas" | "onprem";
  rateLimitRps: number;
  bodyLimitBytes: number;
  http: HttpTimeouts;
  defaultAccountSpendCapKrw: number;
  defaultAppSpendCapKrw: number;
  sessionTtlDays: number;
  gpuCatalogFile: string;
  dbMaxInstances: number;
  overdueAction: "keep" | "pause";
  overdueGraceHours: number;
  payments: PaymentsConfig;
}

/** How long the server waits for a client before dropping its connection (slow or stalled clients cannot pile up). */
export interface HttpTimeouts {
  /** the request line and all headers must arrive within this */
  headersTimeoutMs: number;
  /** the whole request, body included, must arrive within this */
  requestTimeoutMs: number;
  /** an idle keep-alive connection is closed after this */
  keepAliveTimeoutMs: number;
  /** a connection with no traffic in either direction is closed after this */
  idleTimeoutMs: number;
}

/** Card providers, bank deposit account and amount limits (src/billing/payments, src/billing/bank). */
export interface PaymentsConfig {
  stripe: {
    apiBase: string;
    secretKey: string | null;
    webhookSecret: string | null;
    webhookToleranceSeconds: number;
    /** the browser's key (pk_…) and where Stripe.js loads from, for the console's checkout */
    publishableKey: string | null;
    jsUrl: string;
  };
  toss: {
    apiBase: string;
    secretKey: string | null;
    webhookKey: string | null;
    clientKey: string | null;
    jsUrl: string;
  };
  /** top-up limits in provider units: KRW won, USD cents */
  topup: { minKrw: number; maxKrw: number; minUsdCents: number; maxUsdCents: number };
  bank: {
    bankName: string | null;
    accountNumber: string | null;
    accountHolder: string | null;
    minKrw: number;
    maxKrw: number;
  };
  /** first retry of a failed auto-recharge after this long, doubling up to the maximum */
  autoRechargeRetrySeconds: number;
  autoRechargeRetryMaxSeconds: number;
}

/** A bad setting stops start-up with one line naming the variable. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`configuration error: ${variable} ${problem}`);
  }
}

type Env = Record<string, string | undefined>;

/** A whole-number setting within bounds; areas parse their own settings with it. */
export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** One of a fixed set of words; areas parse their own settings with it. */
export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!(allowed as readonly string[]).includes(raw))
    throw new ConfigError(name, `must be one of ${allowed.join(", ")}, got "${raw}"`);
  return raw as T;
}

/** An optional address setting with one of the protocols (`"https:"`), as written, or null when unset. */
export function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === "") return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, "is not a valid URL");
  }
  if (!protocols.includes(parsed.protocol))
    throw new ConfigError(name, `must use ${protocols.join(" or ")}, got ${parsed.protocol}`);
  return raw;
}

/** An optional http(s) address setting without its trailing slashes, or null when unset. */
export function httpUrl(env: Env, name: string): string | null {
  return url(env, name, ["http:", "https:"])?.replace(/\/+$/, "") ?? null;
}

/** A key meant for browsers (publishable, client key): public, but a plain token. */
function publicKey(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw === "") return null;
  if (!/^[\w-]{8,200}$/.test(raw)) throw new ConfigError(name, "must be 8-200 letters, digits, _ or -");
  return raw;
}

function secret(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw === "") return null;
  if (raw.length < 16) throw new ConfigError(name, "must be at least 16 characters");
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const host = env.HOST || "127.0.0.1";
  const baseDomain = env.BASE_DOMAIN || "localhost";
  if (!/^[a-z0-9.-]+$/i.test(baseDomain)) throw new ConfigError("BASE_DOMAIN", `is not a domain name: "${baseDomain}"`);
  return {
    port: int(env, "PORT", 8080, 0, 65535),
    host,
    dataDir: path.resolve(env.DATA_DIR || "./data"),
    databaseUrl: url(env, "DATABASE_URL", ["postgres:", "postgresql:"]),
    baseDomain,
    internalDomain: env.INTERNAL_DOMAIN || "internal",
    operatorToken: secret(env, "OPERATOR_TOKEN"),
    fleetToken: secret(env, "FLEET_TOKEN"),
    signup: oneOf(env, "SIGNUP", ["open", "closed"] as const, "open"),
    redisUrl: url(env, "REDIS_URL", ["redis:", "rediss:"]),
    logLevel: oneOf(env, "LOG_LEVEL", ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const, "info"),
    edition: oneOf(env, "EDITION", ["saas", "onprem"] as const, "saas"),
    rateLimitRps: int(env, "RATE_LIMIT_RPS", 100, 1, 10_000_000),
    bodyLimitBytes: int(env, "BODY_LIMIT_BYTES", 1024 * 1024, 1024, 1024 * 1024 * 1024),
    http: httpTimeouts(env),
    defaultAccountSpendCapKrw: int(env, "DEFAULT_ACCOUNT_SPEND_CAP_KRW", 1_000_000, 1, Number.MAX_SAFE_INTEGER),
    defaultAppSpendCapKrw: int(env, "DEFAULT_APP_SPEND_CAP_KRW", 100_000, 1, Number.MAX_SAFE_INTEGER),
    sessionTtlDays: int(env, "SESSION_TTL_DAYS", 90, 1, 3650),
    dbMaxInstances: int(env, "DB_MAX_INSTANCES", 50, 1, 10_000),
    overdueAction: oneOf(env, "OVERDUE_ACTION", ["keep", "pause"] as const, "keep"),
    overdueGraceHours: int(env, "OVERDUE_GRACE_HOURS", 24, 0, 24 * 90),
    payments: paymentsConfig(env),
    gpuCatalogFile: path.resolve(env.GPU_CATALOG_FILE || new URL("../../catalog/gpus.json", import.meta.url).pathname),
  };
}

function httpTimeouts(env: Env): HttpTimeouts {
  const t = {
    headersTimeoutMs: int(env, "HTTP_HEADERS_TIMEOUT_MS", 10_000, 100, 600_000),
    requestTimeoutMs: int(env, "HTTP_REQUEST_TIMEOUT_MS", 30_000, 100, 3_600_000),
    keepAliveTimeoutMs: int(env, "HTTP_KEEP_ALIVE_TIMEOUT_MS", 5_000, 100, 600_000),
    idleTimeoutMs: int(env, "HTTP_IDLE_TIMEOUT_MS", 120_000, 1_000, 3_600_000),
  };
  if (t.headersTimeoutMs > t.requestTimeoutMs)
    throw new ConfigError("HTTP_HEADERS_TIMEOUT_MS", "must not exceed HTTP_REQUEST_TIMEOUT_MS");
  return t;
}

function paymentsConfig(env: Env): PaymentsConfig {
  const stripeBase = url(env, "STRIPE_API_BASE", ["https:", "http:"]) ?? "https://api.stripe.com";
  const tossBase = url(env, "TOSS_API_BASE", ["https:", "http:"]) ?? "https://api.tosspayments.com";
  const topup = {
    minKrw: int(env, "TOPUP_MIN_KRW", 1_000, 100, 1_000_000_000),
    maxKrw: int(env, "TOPUP_MAX_KRW", 5_000_000, 100, 1_000_000_000),
    minUsdCents: int(env, "TOPUP_MIN_USD_CENTS", 500, 50, 100_000_000),
    maxUsdCents: int(env, "TOPUP_MAX_USD_CENTS", 500_000, 50, 100_000_000),
  };
  if (topup.minKrw > topup.maxKrw) throw new ConfigError("TOPUP_MIN_KRW", "must not exceed TOPUP_MAX_KRW");
  if (topup.minUsdCents > topup.maxUsdCents)
    throw new ConfigError("TOPUP_MIN_USD_CENTS", "must not exceed TOPUP_MAX_USD_CENTS");
  const bank = {
    bankName: env.BANK_DEPOSIT_BANK || null,
    accountNumber: env.BANK_DEPOSIT_ACCOUNT || null,
    accountHolder: env.BANK_DEPOSIT_HOLDER || null,
    minKrw: int(env, "BANK_TRANSFER_MIN_KRW", 10_000, 1, 1_000_000_000_000),
    maxKrw: int(env, "BANK_TRANSFER_MAX_KRW", 10_000_000, 1, 1_000_000_000_000),
  };
  if (bank.minKrw > bank.maxKrw)
    throw new ConfigError("BANK_TRANSFER_MIN_KRW", "must not exceed BANK_TRANSFER_MAX_KRW");
  if (bank.accountNumber !== null && !/^[0-9][0-9-]{5,30}$/.test(bank.accountNumber))
    throw new ConfigError("BANK_DEPOSIT_ACCOUNT", "must be digits and hyphens");
  return {
    stripe: {
      apiBase: stripeBase,
      secretKey: secret(env, "STRIPE_SECRET_KEY"),
      webhookSecret: secret(env, "STRIPE_WEBHOOK_SECRET"),
      webhookToleranceSeconds: int(env, "STRIPE_WEBHOOK_TOLERANCE_SECONDS", 300, 1, 86_400),
      publishableKey: publicKey(env, "STRIPE_PUBLISHABLE_KEY"),
      jsUrl: url(env, "STRIPE_JS_URL", ["https:", "http:"]) ?? "https://js.stripe.com/v3/",
    },
    toss: {
      apiBase: tossBase,
      secretKey: secret(env, "TOSS_SECRET_KEY"),
      webhookKey: secret(env, "TOSS_WEBHOOK_KEY"),
      clientKey: publicKey(env, "TOSS_CLIENT_KEY"),
      jsUrl: url(env, "TOSS_JS_URL", ["https:", "http:"]) ?? "https://js.tosspayments.com/v2/standard",
    },
    topup,
    bank,
    autoRechargeRetrySeconds: int(env, "AUTO_RECHARGE_RETRY_SECONDS", 300, 1, 86_400),
    autoRechargeRetryMaxSeconds: int(env, "AUTO_RECHARGE_RETRY_MAX_SECONDS", 86_400, 1, 7 * 86_400),
  };
}
