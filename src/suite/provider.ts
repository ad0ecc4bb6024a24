/**
 * The suite as a provider (README.md here): identity (OpenID Connect), directory (org units and members) and billing
 * (allowance and usage records). One adapter (adapter/) speaks the documented shape at configurable base URLs;
 * another suite is another implementation of this interface.
 */

/** What a finished sign-in says about the person, from the validated ID token (and userinfo). */
export interface SuiteClaims {
  /** the ID token's `sub`; also the member's user id in the directory */
  subject: string;
  /** the configured company claim, checked on the server */
  companyId: string;
  email: string | null;
  name: string | null;
  /** the configured enterprise-admin claim is true */
  isAdmin: boolean;
  /** the `company_name` claim, when the suite gives one (names a new organization) */
  companyName?: string | null;
}

/** The member's suite login token: metering and allowance lookups act with it. */
export interface SuiteTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
}

/** A sign-in in progress: what the callback needs to finish it (kept in the store, any process finishes it). */
export interface SuiteSignInStart {
  url: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface SuiteIdentity {
  issuer: string;
  /** the authorization URL (code flow with PKCE, state and nonce) */
  begin(): Promise<SuiteSignInStart>;
  /** exchanges the callback's code and validates the ID token against the saved state, nonce and verifier */
  finish(
    callbackUrl: URL,
    saved: Pick<SuiteSignInStart, "state" | "nonce" | "codeVerifier">,
  ): Promise<{ claims: SuiteClaims; tokens: SuiteTokens }>;
  /** a fresh access token from a refresh token */
  refresh(refreshToken: string): Promise<SuiteTokens>;
}

/** An org unit (department) of the suite's chart; `id` is the stable key departments are matched on. */
export interface SuiteUnit {
  id: string;
  name: string;
  parentId: string | null;
}

export interface SuiteMember {
  /** equals the ID token's `sub` */
  userId: string;
  email: string | null;
  name: string | null;
  /** the units the member belongs to, the primary one first */
  unitIds: string[];
}

export interface SuiteDirectory {
  /** the whole chart, every page */
  units(companyId: string): Promise<SuiteUnit[]>;
  /** every member the suite lists, every page */
  members(companyId: string): Promise<SuiteMember[]>;
  /** one member, or null when the suite no longer lists them */
  member(companyId: string, userId: string): Promise<SuiteMember | null>;
}

export interface SuiteAllowance {
  limitKrw: number;
  usedKrw: number;
  remainingKrw: number;
  resetsAt: Date | null;
  /** whom to ask for more (the suite's admin contact) */
  contact: string | null;
}

export interface SuiteUsageRecord {
  companyId: string;
  userId: string;
  /** start of the hour the usage is for */
  hour: Date;
  /** whole KRW (1 unit = 1 KRW) */
  amountKrw: number;
  category: string;
  /** the same record sent again carries the same key; the suite counts it once */
  idempotencyKey: string;
}

/** The suite's answer to a usage record: its id, and whether the key had been sent before (counted once). */
export interface SuiteUsageReceipt {
  recordId: string;
  duplicate: boolean;
}

export interface SuiteBilling {
  /** the member's allowance now, or null when the suite does not list the member */
  allowance(companyId: string, userId: string): Promise<SuiteAllowance | null>;
  reportUsage(record: SuiteUsageRecord): Promise<SuiteUsageReceipt>;
}

export interface SuiteProvider {
  identity: SuiteIdentity;
  directory: SuiteDirectory;
  billing: SuiteBilling;
}
