import https from "node:https";
import tls from "node:tls";
import { createRequire } from "node:module";
import type * as Acme from "acme-client";
import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../store/db.js";
import type { SecretBox } from "../kernel/secrets.js";
import * as repo from "./repo.js";

// acme-client (with axios, node-forge and its ASN.1 stack) loads only in a process that issues certificates
const acme = () => createRequire(import.meta.url)("acme-client") as typeof Acme;

const ACCOUNT_KEY = "acme_accounts.key_sealed";

/** Where an HTTP-01 answer is published while the CA checks it (the table every edge process reads). */
export interface ChallengeStore {
  put(token: string, host: string, keyAuthorization: string): Promise<void>;
  drop(token: string): Promise<void>;
}

export interface Issued {
  certPem: string;
  keyPem: string;
  notBefore: Date;
  notAfter: Date;
  issuer: string;
}

let trusted: string | null = null;

/**
 * acme-client talks through one axios instance of its own: requests time out after 30 s, and a CA file
 * (ACME_CA_FILE, pebble's in tests) is trusted beside the system's roots. Process-wide: one directory's CA.
 */
export function configureAcmeHttp(caPem: string | null): void {
  acme().axios.defaults.timeout = 30_000;
  if (caPem === null || caPem === trusted) return;
  trusted = caPem;
  acme().axios.defaults.httpsAgent = new https.Agent({ ca: [...tls.rootCertificates, caPem], keepAlive: true });
}

/**
 * One ACME account per directory URL (its key generated once, stored sealed, shared by every process) and the
 * order flow for one host: HTTP-01 only, a fresh ECDSA P-256 key per certificate.
 */
export class AcmeIssuer {
  private client: Promise<Acme.Client> | null = null;

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    readonly directoryUrl: string,
    private readonly email: string | null,
    private readonly log: FastifyBaseLogger,
  ) {}

  private account(): Promise<Acme.Client> {
    this.client ??= this.register().catch((err) => {
      this.client = null; // the next issuance tries again
      throw err;
    });
    return this.client;
  }

  private async register(): Promise<Acme.Client> {
    const fresh = (await acme().crypto.createPrivateEcdsaKey("P-256")).toString();
    const row = await repo.acmeAccount(this.db, this.directoryUrl, this.secrets.seal(fresh, ACCOUNT_KEY), this.email);
    const client = new (acme().Client)({
      directoryUrl: this.directoryUrl,
      accountKey: this.secrets.open(row.key_sealed, ACCOUNT_KEY),
      accountUrl: row.account_url ?? undefined,
      // status polls: 1 s, 2 s, 4 s, then every 8 s; a CA taking longer than about a minute fails this attempt
      backoffAttempts: 10,
      backoffMin: 1000,
      backoffMax: 8000,
    });
    if (!row.account_url) {
      // the same key registered twice (two processes at once) is the same account: newAccount answers it
      await client.createAccount({
        termsOfServiceAgreed: true,
        ...(this.email ? { contact: [`mailto:${this.email}`] } : {}),
      });
      await repo.setAccountUrl(this.db, this.directoryUrl, client.getAccountUrl());
      this.log.info({ directory: this.directoryUrl }, "ACME account registered");
    }
    return client;
  }

  /** Orders a certificate for host, proving control by HTTP-01 through `challenges`; throws what went wrong. */
  async issue(host: string, challenges: ChallengeStore): Promise<Issued> {
    const client = await this.account();
    const [key, csr] = await acme().crypto.createCsr(
      { commonName: host, altNames: [host] },
      await acme().crypto.createPrivateEcdsaKey("P-256"),
    );
    let certPem: string;
    try {
      certPem = await client.auto({
        csr,
        termsOfServiceAgreed: true,
        // the CA checks through the edge; a check of our own would need this process to reach the host by name
        skipChallengeVerification: true,
        challengePriority: ["http-01"],
        challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
          if (challenge.type !== "http-01") throw new Error(`the CA offers no HTTP-01 challenge for ${host}`);
          await challenges.put(challenge.token, host, keyAuthorization);
        },
        challengeRemoveFn: async (_authz, challenge) => {
          if (challenge.type === "http-01") await challenges.drop(challenge.token);
        },
      });
    } catch (err) {
      // a CA that forgot the account (a test CA restarted, an account deactivated): register again next time
      if (/account.*(does not exist|not found|deactivated)|accountDoesNotExist/i.test(String(err))) {
        this.client = null;
        await repo.setAccountUrl(this.db, this.directoryUrl, null);
      }
      throw err;
    }
    const info = acme().crypto.readCertificateInfo(certPem);
    return {
      certPem,
      keyPem: key.toString(),
      notBefore: info.notBefore,
      notAfter: info.notAfter,
      issuer: info.issuer.commonName,
    };
  }
}
