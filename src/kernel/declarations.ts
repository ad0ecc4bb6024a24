import { declareErrorCodes } from "../http/errors.js";
import { declareScopeResources } from "../auth/scopes.js";
import type { AreaModule } from "./context.js";

/**
 * Merges what each listed area declares for everyone into the shared tables: its error codes into the one
 * catalog, its scope resources into the scope grammar. A code or resource two areas declare stops start-up,
 * naming both; the same areas declared again (a second platform in one process) change nothing.
 */
export function declareAreas(areas: readonly Pick<AreaModule, "name" | "errors" | "scopes">[]): void {
  declareErrorCodes(areas.map((a) => ({ area: a.name, errors: a.errors ?? {} })));
  declareScopeResources(areas.map((a) => ({ area: a.name, scopes: a.scopes ?? {} })));
}
