import { defineArea } from "../../kernel/area.js";
import { inviteRoutes } from "./routes.js";

/**
 * Members and invitations (README.md here): invitations by e-mail, their preview and acceptance, and the admins'
 * member changes. A sub-area of organizations: it uses src/orgs only through ../public.ts.
 */
export const orgInvitesArea = defineArea<null>({
  name: "orgs-invites",
  routes: (app, ctx) => inviteRoutes(app, ctx),
});
