import { defineArea } from "../../kernel/area.js";

/** The suite's sign-in part (README.md of src/suite): to be built. */
export const suiteSignInArea = defineArea<null>({
  name: "suite-sign-in",
});
