import { defineArea } from "../../kernel/area.js";

/** The suite's billing part (README.md of src/suite): to be built. */
export const suiteBillingArea = defineArea<null>({
  name: "suite-billing",
});
