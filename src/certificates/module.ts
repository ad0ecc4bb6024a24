import { readFileSync } from "node:fs";
import { defineArea } from "../kernel/area.js";
import { ConfigError } from "../config/config.js";
import { AcmeIssuer, configureAcmeHttp } from "./acme.js";
import { certificatesConfig, type CertificatesConfig } from "./config.js";
import { Certificates, ISSUE_JOB, RENEW_JOB } from "./service.js";

export type { Certificates } from "./service.js";

/**
 * TLS certificates (issue 11; README.md here): per host name, obtained by ACME (HTTP-01 answered by the edge),
 * stored with the key sealed, renewed before expiry. Listed before the edge, whose HTTPS listener serves them
 * through kernel.use("certificates").
 */
export const certificatesArea = defineArea<Certificates, CertificatesConfig>({
  name: "certificates",
  config: certificatesConfig,
  setup: (p, config) => {
    let issuer: AcmeIssuer | null = null;
    if (config.directoryUrl) {
      let ca: string | null = null;
      if (config.caFile) {
        try {
          ca = readFileSync(config.caFile, "utf8");
        } catch (err) {
          throw new ConfigError("ACME_CA_FILE", `cannot be read: ${(err as Error).message}`);
        }
      }
      configureAcmeHttp(ca);
      issuer = new AcmeIssuer(p.db, p.secrets, config.directoryUrl, config.email, p.log);
    }
    const certificates = new Certificates({
      db: p.db,
      secrets: p.secrets,
      jobs: p.jobs,
      log: p.log,
      renewDays: config.renewDays,
      issuer,
    });
    p.kernel.provide("certificates", certificates);
    return certificates;
  },
  jobs: (_p, certificates) => [
    {
      name: ISSUE_JOB,
      // failures are the row's business (recorded, retried with back-off); a throw here is the store failing
      handler: async (data: { host: string }) => certificates.issue(data.host),
      retryLimit: 2,
      expireInSeconds: 14 * 60,
      concurrency: 2,
      // with a singleton key per host: at most one queued and one running per host
      policy: "stately",
    },
    {
      name: RENEW_JOB,
      handler: async () => void (await certificates.renewDue()),
      cron: "41 * * * *",
      retryLimit: 1,
      policy: "stately",
    },
  ],
});
