import path from "node:path";
import { defineArea } from "../kernel/area.js";
import { tossClient } from "../billing/public.js";
import { onpremConfig, type OnpremConfig } from "./config.js";
import { editionView } from "./installation.js";
import { loadSigningKey, type SigningKey } from "./license.js";
import { accessService, type AccessService } from "./access-service.js";
import { licensesService, type LicensesService } from "./licenses-service.js";
import { ordersService, type OrdersService } from "./orders-service.js";
import { releasesService, type ReleasesService } from "./releases-service.js";
import { accessRoutes } from "./routes/access.js";
import { licenseRoutes } from "./routes/licenses.js";
import { releaseRoutes } from "./routes/releases.js";
import { operatorRoutes } from "./routes/operator.js";
import { ONPREM_ERROR_CODES } from "./errors.js";

export interface OnpremState {
  config: OnpremConfig;
  signingKey: SigningKey;
  access: AccessService;
  licenses: LicensesService;
  orders: OrdersService;
  releases: ReleasesService;
}

/**
 * On-premises licensing (issue 15; README: src/onprem/README.md): access inquiries the operator approves, terms,
 * pricing, one trial per owner, orders paid through Toss Payments, Ed25519-signed licenses, releases behind signed
 * download addresses; and, in the on-premises edition, this installation's own license checked at start-up.
 */
export const onpremArea = defineArea<OnpremState, OnpremConfig>({
  name: "onprem",
  errors: ONPREM_ERROR_CODES,
  tags: [
    {
      name: "onprem",
      description: "On-premises licensing: access approval, terms, pricing, trials, orders, signed licenses, releases.",
    },
  ],
  config: onpremConfig,
  setup: async (p, config) => {
    if (config.installation) {
      p.kernel.provide("editionLicense", editionView(config.installation));
      p.log.info(
        { license: config.installation.license.license_id, not_after: config.installation.license.not_after },
        "on-premises license verified",
      );
    }
    const signingKey = await loadSigningKey(config.signingKey, p.config.dataDir);
    if (signingKey.file)
      p.log.info({ path: signingKey.file, keyId: signingKey.keyId }, "on-premises license signing key");
    const deps = { db: p.db, kernel: p.kernel, config };
    const access = accessService(deps);
    const licenses = licensesService({ ...deps, signingKey });
    const orders = ordersService({
      ...deps,
      signingKey,
      toss: tossClient(p.config.payments.toss),
      tossClientKey: p.config.payments.toss.clientKey,
      secrets: p.secrets,
      log: p.log,
    });
    const releases = releasesService({
      ...deps,
      dir: config.releasesDir ?? path.join(p.config.dataDir, "onprem-releases"),
      urlKey: p.secrets.derive("onprem-release-download"),
    });
    return { config, signingKey, access, licenses, orders, releases };
  },
  routes: async (app, _ctx, s) => [
    ...accessRoutes(s),
    ...licenseRoutes(s),
    ...releaseRoutes(s, { downloadBaseUrl: s.config.downloadBaseUrl }),
    ...(await operatorRoutes(app, s)),
  ],
});
