import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { Db } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import type { SecretBox } from "../kernel/secrets.js";
import type { Hosts } from "../hosts/contract.js";
import type { ImageAccess } from "./contract.js";
import type { InstanceFilter, Principal } from "../auth/principal.js";
import { hashSecret } from "../auth/secrets.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError } from "../http/errors.js";
import * as repo from "./repo.js";
import { namespaceOf } from "./namespace.js";
import {
  basicCredentials,
  grant,
  inNamespace,
  parseScopes,
  TOKEN_SERVICE,
  TokenSigner,
  type SignedToken,
} from "./token.js";
import { newSigningKey } from "./x509.js";
import { RegistryClient } from "./client.js";
import { classify } from "./images.js";
import type { RegistryConfig } from "./config.js";

const KEY_COLUMN = "registry_signing_keys.private_key";
/** a token lives this long at most (never past its credentials' expiry) */
const TOKEN_TTL_SECONDS = 300;

export interface RegistryDeps {
  db: Db;
  secrets: SecretBox;
  config: RegistryConfig;
  hosts: Hosts;
  /** the registry this process runs, while it runs */
  local: () => string | null;
  /** why this process runs no registry (binary missing), or null */
  localProblem: () => string | null;
}

export interface IssuedCredentials {
  registry: string;
  namespace: string;
  username: string;
  password: string;
  expires_at: Date;
}

export class RegistryService {
  private signerPromise: Promise<TokenSigner> | null = null;

  constructor(private readonly d: RegistryDeps) {}

  /** The signing key every process shares: created once, sealed in the store. */
  signer(): Promise<TokenSigner> {
    this.signerPromise ??= this.loadSigner().catch((err) => {
      this.signerPromise = null;
      throw err;
    });
    return this.signerPromise;
  }

  private async loadSigner(): Promise<TokenSigner> {
    let row = await repo.signingKey(this.d.db);
    if (!row) {
      const fresh = await newSigningKey("platform registry token issuer");
      row = await repo.insertSigningKey(this.d.db, {
        private_key: this.d.secrets.seal(fresh.privateKeyPem, KEY_COLUMN),
        certificate: fresh.certificate,
      });
    }
    return new TokenSigner(this.d.secrets.open(row.private_key, KEY_COLUMN), row.certificate);
  }

  /** base64 DER of the certificate the registry must trust */
  async certificate(): Promise<string> {
    await this.signer();
    return (await repo.signingKey(this.d.db))!.certificate;
  }

  /** Addresses of the running registries: this process's first, then those other hosts recorded. */
  async addresses(): Promise<string[]> {
    const local = this.d.local();
    const out = local ? [local] : [];
    for (const s of await repo.servers(this.d.db)) {
      if (!out.includes(s.address) && (await this.d.hosts.available(this.d.db, s.host_id))) out.push(s.address);
    }
    return out;
  }

  /** The registry clients are sent to, or 503 registry_unavailable saying why there is none. */
  async address(): Promise<string> {
    const [first] = await this.addresses();
    if (first) return first;
    throw new ApiError(
      "registry_unavailable",
      this.d.localProblem() ??
        "No image registry is running: a host with the worker role starts it (install with: apt-get install docker-registry).",
    );
  }

  private async mint(
    q: Parameters<typeof namespaceOf>[0],
    owner: Owner,
    accountId: string | null,
    purpose: "user" | "runtime",
    repositories: string[] | null,
    actions: string[],
    ttlSeconds: number,
  ): Promise<Omit<IssuedCredentials, "registry">> {
    const namespace = await namespaceOf(q, owner);
    const username = `${purpose === "user" ? "u" : "r"}_${randomBytes(12).toString("hex")}`;
    const password = randomBytes(32).toString("base64url");
    const expires_at = new Date(Date.now() + ttlSeconds * 1000);
    await repo.pruneCredentials(q);
    await repo.insertCredential(q, {
      id: randomUUID(),
      username,
      password_hash: hashSecret(password),
      owner_kind: owner.kind,
      owner_id: owner.id,
      account_id: accountId,
      purpose,
      namespace,
      repositories: repositories?.map((r) => `${namespace}/${r}`) ?? null,
      actions,
      expires_at,
    });
    return { namespace, username, password, expires_at };
  }

  /**
   * Push and pull credentials for `podman login`, limited to the owner's namespace (and, for a key
   * limited to registry instances, to those repositories).
   */
  async createCredentials(p: Principal, filter: InstanceFilter): Promise<IssuedCredentials> {
    const registry = await this.address();
    const issued = await auditedTransaction(this.d.db, p, (tx) =>
      this.mint(tx, p.owner, p.accountId, "user", filter, ["pull", "push"], this.d.config.credentialTtlSeconds),
    );
    return { registry, ...issued };
  }

  /** The token endpoint: Basic credentials in, a token granting what they allow of the requested scopes out. */
  async issueToken(authorization: string | undefined, query: URLSearchParams): Promise<SignedToken> {
    const service = query.get("service");
    if (service !== null && service !== TOKEN_SERVICE)
      throw new ApiError("invalid_request", `This token endpoint serves "${TOKEN_SERVICE}", not "${service}".`);
    const basic = basicCredentials(authorization);
    if (!basic)
      throw new ApiError(
        "auth_required",
        "Registry credentials are required (HTTP Basic); get them with POST /v1/registry/credentials.",
      );
    const row = await repo.credential(this.d.db, basic.username);
    const valid = row !== null && timingSafeEqual(hashSecret(basic.password), row.password_hash);
    if (!row || !valid) throw new ApiError("auth_required", "Wrong registry user name or password.");
    const left = Math.floor((row.expires_at.getTime() - Date.now()) / 1000);
    if (left <= 0)
      throw new ApiError(
        "auth_required",
        "These registry credentials have expired; get new ones with POST /v1/registry/credentials.",
      );
    const access = grant(parseScopes(query.getAll("scope")), row);
    return (await this.signer()).sign(row.username, access, Math.min(TOKEN_TTL_SECONDS, left));
  }

  private async client(): Promise<{ client: RegistryClient; registry: string }> {
    const registry = await this.address();
    return { client: new RegistryClient(registry, await this.signer()), registry };
  }

  /** The owner's repositories and their tags, from the registry's own catalog. */
  async list(p: Principal, filter: InstanceFilter) {
    const { client, registry } = await this.client();
    const namespace = await namespaceOf(this.d.db, p.owner);
    const names = (await client.repositories(`${namespace}/`)).filter((n) => inNamespace(n, namespace));
    const repositories = [];
    for (const full of names) {
      const name = full.slice(namespace.length + 1);
      if (filter && !filter.includes(name)) continue;
      repositories.push({ name, image: `${registry}/${full}`, tags: await client.tags(full) });
    }
    return { registry, namespace, repositories };
  }

  /** Deletes the image a tag names in one of the owner's repositories (name relative to the namespace). */
  async deleteTag(p: Principal, name: string, tag: string): Promise<void> {
    const { client } = await this.client();
    const namespace = await namespaceOf(this.d.db, p.owner);
    const deleted = await auditedTransaction(this.d.db, p, () => client.deleteTag(`${namespace}/${name}`, tag));
    if (!deleted) throw new ApiError("not_found", `No tag ${tag} in repository ${name}.`);
  }

  /**
   * Who may run which image (kernel ImageAccess): images of this registry only from the owner's own
   * namespace, with pull-only credentials minted for the runtime; public registries anonymously;
   * the host's local store (`localhost/...`) only when APPS_ALLOW_LOCAL_IMAGES=1; other loopback
   * registries never.
   */
  imageAccess(): ImageAccess {
    return {
      pullFor: async (owner, image) => {
        const addresses = await this.addresses();
        const verdict = classify(image, addresses);
        if (verdict.kind === "public") return null;
        if (verdict.kind === "local") {
          if (this.d.config.allowLocalImages) return null;
          throw new ApiError(
            "image_forbidden",
            `${image} names the host's local image store, which holds other owners' and the platform's images; push it to this platform's registry instead.`,
          );
        }
        if (verdict.kind === "foreign_loopback") {
          if (!addresses.length) await this.address(); // 503: no registry to tell ours from others
          throw new ApiError(
            "image_forbidden",
            `${image} is on a loopback address that is not this platform's registry (${addresses.join(", ")}).`,
          );
        }
        const namespace = await namespaceOf(this.d.db, owner);
        if (!inNamespace(verdict.ref.path, namespace))
          throw new ApiError(
            "image_forbidden",
            `${image} is not in this owner's registry namespace "${namespace}"; images of this registry deploy only from ${namespace}/.`,
          );
        const issued = await this.mint(
          this.d.db,
          owner,
          null,
          "runtime",
          [verdict.ref.path.slice(namespace.length + 1)],
          ["pull"],
          this.d.config.pullTtlSeconds,
        );
        return { username: issued.username, password: issued.password };
      },
      // the builder's push: one repository of the owner's namespace, pull and push, as short-lived as a pull
      pushFor: async (owner, repository) => {
        const registry = await this.address();
        const issued = await this.mint(
          this.d.db,
          owner,
          null,
          "runtime",
          [repository],
          ["pull", "push"],
          this.d.config.pullTtlSeconds,
        );
        return {
          registry,
          namespace: issued.namespace,
          username: issued.username,
          password: issued.password,
          expires_at: issued.expires_at,
        };
      },
    };
  }

  /** Records the registry this host runs, so API processes on other hosts find it. */
  async recordServer(hostId: string, address: string): Promise<void> {
    await repo.recordServer(this.d.db, hostId, address);
  }

  async forgetServer(hostId: string): Promise<void> {
    await repo.forgetServer(this.d.db, hostId);
  }
}
