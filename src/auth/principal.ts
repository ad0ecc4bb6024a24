import type { Grant } from "./scopes.js";

/** The authenticated caller, travelling as one object. */
export interface Principal {
  accountId: string;
  tokenId: string;
  kind: "full" | "scoped";
  grants: Grant[];
  scopes: string[];
  expiresAt: Date | null;
}

/** Instance refs (ids or slugs) a list endpoint must narrow to; null means every instance. */
export type InstanceFilter = string[] | null;
