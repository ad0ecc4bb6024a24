/** What the static area provides the others (capability "staticFiles"): the files of static sites, for the edge. */
import type { Queryable } from "../store/db.js";
import type { Principal } from "../auth/principal.js";

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    staticFiles: StaticFiles;
  }
}

/** One file of a static deployment; `hash` (sha256 hex) names its content, shared between deployments. */
export interface StaticFileEntry {
  hash: string;
  size: number;
  contentType: string;
}

/**
 * The files of static sites, for the edge (the static area sets it). A finalized deployment never changes and a
 * hash always names the same bytes, so the edge caches both without invalidation.
 */
export interface StaticFiles {
  /** every file of a deployment by path ("index.html", "assets/app.js"); empty for an unknown deployment */
  manifest(q: Queryable, deploymentId: string): Promise<Map<string, StaticFileEntry>>;
  /** the bytes of one file content, or null when no such content is stored */
  content(q: Queryable, hash: string): Promise<Buffer | null>;
  /**
   * Makes a finalized deployment of the caller's site live again, as `POST /v1/static/{slug}/rollback` (ApiErrors
   * as there); organizations' GitOps auto-sync. Optional.
   */
  rollback?(p: Principal, site: string, deploymentId: string): Promise<void>;
}
