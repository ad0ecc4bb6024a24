/** What the events area provides through the kernel: the route guard of its webhook routes. */
import type { RouteGuard } from "../http/route-guard.js";

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    /** in the company context an organization's webhook endpoints are for its admins and owner (guard.ts) */
    orgWebhookAdmins: RouteGuard;
  }
}
