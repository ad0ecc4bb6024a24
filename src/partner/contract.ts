/** What the partner area provides through the kernel: the guard of its /v1/partner routes (guard.ts). */
import type { RouteGuard } from "../http/route-guard.js";

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    /** the caller is a partner account acting for itself (403 partner_required otherwise) */
    partnerAccount: RouteGuard;
  }
}
