import { defineArea } from "../../kernel/area.js";

/** The suite's directory part (README.md of src/suite): to be built. */
export const suiteDirectoryArea = defineArea<null>({
  name: "suite-directory",
});
