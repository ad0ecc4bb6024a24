import { defineArea } from "../../kernel/area.js";
import { registerRoutes } from "../../http/route.js";
import { orgOnlyAdmission } from "./admission.js";
import { signInRoutes } from "./routes.js";
import { signInService } from "./service.js";
import { suiteOf } from "../state.js";

/**
 * The suite's sign-in part (README.md of src/suite, "Sign-in"): OpenID Connect sign-in through the suite, linking a
 * company to a new organization, the setup wizard, the join policy, the owner's recovery code, and org_only.
 */
export const suiteSignInArea = defineArea<null>({
  name: "suite-sign-in",
  setup: (p) => {
    // the edge's "Sign in with the suite" on a company site's host (src/edge/suite-sign-in.ts), with a suite only
    if (suiteOf(p).provider === null) return null;
    const svc = signInService(p);
    p.kernel.provide("suiteEdgeSignIn", {
      start: async (returnTo, browserHash) => (await svc.start(returnTo, Buffer.from(browserHash, "hex"))).url,
      exchange: async (code, browser) => (await svc.exchange(code, browser)).token,
    });
    return null;
  },
  routes: (app, ctx) => {
    registerRoutes(app, signInRoutes(ctx, signInService(ctx)));
  },
  admission: () => orgOnlyAdmission(),
  admissionErrors: ["org_only"],
});
