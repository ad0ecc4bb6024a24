import type { Grant } from "./scopes.js";

/** The authenticated caller, travelling as one object. */
export interface Principal {
  accountId: string;
  tokenId: string;
  kind: "full" | "scoped";
  grants: Grant[];
  scopes: string[];
  expiresAt: Date | null;
  /** The account as loaded with the token; dropped with it whenever the account changes (NOTIFY), so never stale for long. */
  account: AccountSnapshot;
}

export interface AccountSnapshot {
  id: string;
  email: string;
  display_name: string | null;
  locale: "ko" | "en";
  has_password: boolean;
  account_spend_cap_krw: number | null;
  app_spend_cap_krw: number | null;
  created_at: Date;
}

/** Instance refs (ids or slugs) a list endpoint must narrow to; null means every instance. */
export type InstanceFilter = string[] | null;
