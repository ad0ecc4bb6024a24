/**
 * @hosting-platform/sdk: the typed client of the platform's REST API. `schema.d.ts` is generated from
 * /v1/openapi.json (`npm run sdk:generate`); this package adds what generated code lacks: bearer auth,
 * retries with Idempotency-Key and Retry-After, typed errors, cursor paging and waiting for
 * asynchronous operations. Browser-safe: nothing here imports a Node module.
 */
export {
  createPlatformClient,
  unwrap,
  type Database,
  type DatabaseCommand,
  type Page,
  type PlatformClient,
  type PlatformClientOptions,
  type WaitOptions,
  type components,
  type paths,
} from "./client.js";
export {
  PlatformApiError,
  PlatformError,
  PlatformNetworkError,
  PlatformOperationError,
  apiErrorOf,
  retryAfterSeconds,
} from "./errors.js";
export { platformFetch, type TransportOptions } from "./transport.js";
export {
  buildRequest,
  coerceValue,
  indexOperations,
  type JsonSchema,
  type OpenApiDocument,
  type Operation,
  type OperationIndex,
  type OperationRequest,
} from "./operations.js";
