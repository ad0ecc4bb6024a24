import { defineArea } from "../../kernel/area.js";
import { registerRoutes } from "../../http/route.js";
import { orgOnlyAdmission } from "./admission.js";
import { signInRoutes } from "./routes.js";
import { signInService } from "./service.js";

/**
 * The suite's sign-in part (README.md of src/suite, "Sign-in"): OpenID Connect sign-in through the suite, linking a
 * company to a new organization, the setup wizard, the join policy, the owner's recovery code, and org_only.
 */
export const suiteSignInArea = defineArea<null>({
  name: "suite-sign-in",
  routes: (app, ctx) => {
    registerRoutes(app, signInRoutes(ctx, signInService(ctx)));
  },
  admission: () => orgOnlyAdmission(),
  admissionErrors: ["org_only"],
});
