import { fileURLToPath } from "node:url";
import { defineArea } from "../kernel/area.js";
import { publicBaseUrl } from "../orgs/public.js";
import { suiteConfig, type SuiteConfig } from "./config.js";
import { SUITE_ERROR_CODES } from "./errors.js";
import { suiteAdapter } from "./adapter/index.js";
import type { SuiteState } from "./state.js";

/**
 * The suite core (issue 27, README.md here): settings, the provider (identity, directory, billing) and the shared
 * tables. Its parts are areas of their own, listed right after it in src/areas.ts: sign-in/ (OpenID Connect,
 * linking, the setup wizard, join policy), directory/ (departments mirrored from the suite's chart, deprovisioning)
 * and billing/ (usage reported to each member's suite account, the two 402s, stop-on-exhausted).
 */
export const suiteArea = defineArea<SuiteState, SuiteConfig>({
  name: "suite",
  errors: SUITE_ERROR_CODES,
  migrations: fileURLToPath(new URL("./migrations/", import.meta.url)),
  tags: [{ name: "suite", description: "Suite login, join policy, department mirroring and suite billing." }],
  config: suiteConfig,
  setup: (p, config) => {
    const redirectUrl = config.redirectUrl ?? `${publicBaseUrl(p.env, p.config)}/v1/auth/suite/callback`;
    const provider = config.issuer ? suiteAdapter({ ...config, issuer: config.issuer, redirectUrl }) : null;
    return { config, redirectUrl, provider };
  },
});
