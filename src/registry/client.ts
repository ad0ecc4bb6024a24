import { ApiError } from "../http/errors.js";
import type { Access, TokenSigner } from "./token.js";

/**
 * The platform reading its own registry (distribution's HTTP API v2) with tokens it mints for itself:
 * the catalog, tag lists, and deleting a tagged manifest.
 */

const MANIFEST_TYPES = [
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.docker.distribution.manifest.v2+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
].join(", ");

const PAGE = 1000;
const MAX_PAGES = 100;

export class RegistryClient {
  constructor(
    private readonly address: string,
    private readonly signer: TokenSigner,
  ) {}

  private async call(path: string, access: Access[], init: RequestInit = {}): Promise<Response> {
    const { token } = this.signer.sign("platform", access, 60);
    try {
      return await fetch(`http://${this.address}${path}`, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(15_000),
      });
    } catch (err) {
      throw new ApiError(
        "registry_unavailable",
        `The image registry at ${this.address} did not answer: ${String(err)}`,
      );
    }
  }

  private async fail(res: Response, what: string): Promise<never> {
    const text = (await res.text()).slice(0, 300);
    throw new ApiError("registry_unavailable", `The image registry refused ${what}: HTTP ${res.status} ${text}`);
  }

  /** Every repository whose name starts with `prefix`, read page by page from the catalog. */
  async repositories(prefix: string): Promise<string[]> {
    const found: string[] = [];
    let last: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const query = new URLSearchParams({ n: String(PAGE) });
      if (last) query.set("last", last);
      const res = await this.call(`/v2/_catalog?${query}`, [{ type: "registry", name: "catalog", actions: ["*"] }]);
      if (!res.ok) await this.fail(res, "the catalog");
      const names = ((await res.json()) as { repositories?: string[] }).repositories ?? [];
      found.push(...names.filter((n) => n.startsWith(prefix)));
      if (names.length < PAGE) break;
      last = names[names.length - 1];
    }
    return found;
  }

  /** The repository's tags, sorted; empty when it has none (or no longer exists). */
  async tags(repository: string): Promise<string[]> {
    const res = await this.call(`/v2/${repository}/tags/list`, [
      { type: "repository", name: repository, actions: ["pull"] },
    ]);
    if (res.status === 404) return [];
    if (!res.ok) await this.fail(res, `the tags of ${repository}`);
    return (((await res.json()) as { tags?: string[] | null }).tags ?? []).sort();
  }

  /**
   * Deletes the manifest the tag points to (distribution deletes by digest: every tag naming that
   * manifest goes with it). Layers stay on disk until the registry's garbage collection. False when
   * there is no such tag.
   */
  async deleteTag(repository: string, tag: string): Promise<boolean> {
    const access: Access[] = [{ type: "repository", name: repository, actions: ["pull", "delete"] }];
    const head = await this.call(`/v2/${repository}/manifests/${encodeURIComponent(tag)}`, access, {
      method: "HEAD",
      headers: { accept: MANIFEST_TYPES },
    });
    if (head.status === 404) return false;
    if (!head.ok) await this.fail(head, `the manifest ${repository}:${tag}`);
    const digest = head.headers.get("docker-content-digest");
    if (!digest) throw new ApiError("registry_unavailable", "The image registry gave no digest for the manifest.");
    const del = await this.call(`/v2/${repository}/manifests/${digest}`, access, { method: "DELETE" });
    if (del.status === 404) return false;
    if (!del.ok) await this.fail(del, `deleting ${repository}@${digest}`);
    return true;
  }
}
