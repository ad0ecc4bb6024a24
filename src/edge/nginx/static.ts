import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { AdminPushQueue } from "./push-queue.js";
import type { EdgeTarget } from "../../kernel/contracts.js";
import type { StaticFileEntry } from "../../static/contract.js";
import type { Resolved } from "../route-cache.js";
import { compressBrotli, compressGzip, compressible } from "../static-serve.js";

export interface NginxStaticOptions {
  /** `<dataDir>/edge-static`: blobs by content hash, one index file per materialised deployment */
  dir: string;
  /** the Node edge's compression limit (EDGE_STATIC_CACHE_MB): files beyond a quarter of it go uncompressed */
  cacheBytes: number;
  /** a deployment's files (the static area's manifest) */
  manifest: (deploymentId: string) => Promise<Map<string, StaticFileEntry>>;
  /** a content's bytes, through the Node edge's own cache (a file it just served is not read from the store again) */
  content: (hash: string) => Promise<Buffer | null>;
  /** one admin call to nginx (the plane's loopback admin server); resolves null when nginx did not take it */
  admin: (pathname: string, body: string) => Promise<string | null>;
  /** whether a site may be answered by nginx alone (public, no access policy) */
  open: (target: EdgeTarget) => boolean;
  /** the route feed hears NOTIFYs now (else nothing is pushed: nothing would drop it) */
  live: () => boolean;
  /** a pushed site's target, for the owner of the statistics nginx counts for it */
  known: (target: EdgeTarget) => void;
  log: FastifyBaseLogger;
}

/** a deployment unused this long (no host pushed to it) loses its index; blobs only it named go with it */
const KEEP_UNUSED_MS = 10 * 60_000;
const SWEEP_MS = 60_000;
/** files read from the store and written at once while materialising */
const PARALLEL = 4;

/**
 * Static sites answered by nginx (README "Static sites in nginx"). A public site's live deployment is materialised
 * under `dir` once: each content to `blobs/<ab>/<hash>` (with `.br` / `.gz` beside it where the Node edge would
 * compress it and the variant is smaller), written to a temporary file and renamed, so nginx never sees half a
 * file; then `deployments/<id>` lists path → hash, type and flags (also renamed into place last, so an index
 * names only complete blobs). Then `host → site, deployment, SPA, 404 page` is pushed into nginx's `edge_sites`
 * dict, where the Lua side (static-lua.ts) resolves paths exactly as static-serve.ts does and hands the file to
 * nginx's static module (sendfile). Until then, and for anything it cannot answer, the Node edge serves.
 * Deployments no host has used for 10 minutes are swept with the blobs no kept index names.
 */
export class NginxStatic {
  /** host → deployment id, for every host nginx holds */
  private readonly pushed = new Map<string, string>();
  /** deployment id → its content hashes, for every index on disk this process knows */
  private readonly indexes = new Map<string, Set<string>>();
  /** host → deployment id of locked sites nginx holds for admitted visitors (access-cache.ts) */
  private readonly pinned = new Map<string, string>();
  /** deployment id → when a host last named it */
  private readonly used = new Map<string, number>();
  private readonly materialising = new Map<string, Promise<boolean>>();
  /** deployments that cannot be served by nginx (a path it could not name): the Node edge keeps them */
  private readonly refused = new Set<string>();
  /** nginx may hold sites (pushed since the last flush; a failed call may have reached it) */
  private holding = false;
  private readonly pushes: AdminPushQueue;
  private sweeping: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  generation = 0;

  constructor(private readonly opts: NginxStaticOptions) {
    // nginx down, restarting or slow: pushed again as resolved; the next change flushes whatever reached it
    this.pushes = new AdminPushQueue(
      (body) => this.opts.admin("/sites", body),
      () => this.pushed.clear(),
    );
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(), SWEEP_MS);
    this.timer.unref();
    void this.sweep();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** nginx (re)started: its dicts are empty, hosts are pushed again as the Node edge resolves them */
  restarted(): void {
    this.pushed.clear();
    this.holding = false;
  }

  /** A host resolved by the Node edge (begun at `generation`): a public site is materialised, then pushed. */
  offer(host: string, resolved: Resolved, generation: number): void {
    const t = resolved.target;
    const deploymentId = t?.site?.deploymentId;
    if (
      !t ||
      !t.site ||
      !deploymentId ||
      !this.opts.open(t) ||
      !NginxStatic.servable(host, t) ||
      this.refused.has(deploymentId)
    ) {
      if (this.pushed.delete(host)) this.send(`del ${host}`);
      return;
    }
    if (generation !== this.generation || !this.opts.live()) return;
    if (this.pushed.get(host) === deploymentId) return;
    this.used.set(deploymentId, Date.now());
    void this.materialise(deploymentId).then((ok) => {
      if (!ok || generation !== this.generation || !this.opts.live()) return;
      this.opts.known(t);
      this.pushed.set(host, deploymentId);
      this.holding = true;
      this.used.set(deploymentId, Date.now());
      this.send(`set ${host} ${NginxStatic.value(t)}`);
    });
  }

  /** a deployment nginx serves beside the public sites (a locked site's): kept on disk while pinned */
  pin(host: string, deploymentId: string | null): void {
    if (deploymentId === null) return void this.pinned.delete(host);
    this.pinned.set(host, deploymentId);
    this.used.set(deploymentId, Date.now());
  }

  /** whether a site's host and settings fit the dict's line format (else the Node edge keeps it) */
  static servable(host: string, t: EdgeTarget): boolean {
    return !/\s/.test(host) && !/[\t\n\r]/.test(t.site?.notFoundPage ?? "");
  }

  /** every locked site's pin goes (a route change: they are pinned again as resolved) */
  unpinAll(): void {
    for (const id of this.pinned.values()) this.used.set(id, Date.now());
    this.pinned.clear();
  }

  /** The value `edge_sites` holds for a site (access-lua.ts pushes it for locked sites too). */
  static value(t: EdgeTarget): string {
    return `${t.kind}:${t.id}\t${t.site!.deploymentId}\t${t.site!.spa ? 1 : 0}\t${t.site!.notFoundPage ?? ""}`;
  }

  /** A route source's change: every site host goes back to the Node edge until resolved again. */
  invalidate(): void {
    this.generation++;
    this.pushed.clear();
    if (this.holding) this.send("flush");
    this.holding = false;
  }

  /** resolves once every change queued so far reached nginx */
  settled(): Promise<void> {
    return this.pushes.settled();
  }

  private send(line: string): void {
    this.pushes.send(line);
  }

  /** the deployment's blobs and index on disk; false when nginx cannot serve it (the Node edge does) */
  materialise(deploymentId: string): Promise<boolean> {
    if (this.indexes.has(deploymentId)) return Promise.resolve(true);
    let pending = this.materialising.get(deploymentId);
    if (!pending) {
      // after a sweep under way, never beside one: a sweep must not take blobs an index is about to name
      pending = this.sweeping
        .then(() => this.write(deploymentId))
        .catch((err: unknown) => {
          this.opts.log.warn({ err, deploymentId }, "edge nginx: a static deployment was not materialised");
          return false;
        })
        .finally(() => this.materialising.delete(deploymentId));
      this.materialising.set(deploymentId, pending);
    }
    return pending;
  }

  private async write(deploymentId: string): Promise<boolean> {
    const index = path.join(this.opts.dir, "deployments", deploymentId);
    const existing = await readFile(index, "utf8").catch(() => null);
    if (existing !== null) {
      this.indexes.set(deploymentId, new Set(existing.split("\n").map((l) => l.split("\t")[1] ?? "")));
      return true;
    }
    const manifest = await this.opts.manifest(deploymentId);
    // a path nginx could not name in the index (control characters) leaves the whole site to the Node edge
    if (manifest.size === 0 || [...manifest.keys()].some((p) => /[\t\n\r]/.test(p))) {
      if (manifest.size > 0) this.refused.add(deploymentId);
      return false;
    }
    const hashes = new Set([...manifest.values()].map((e) => e.hash));
    this.indexes.set(deploymentId, hashes); // a sweep from now on keeps these blobs
    try {
      const flags = new Map<string, string>();
      const entries = [...new Map([...manifest.values()].map((e) => [e.hash, e])).values()];
      for (let i = 0; i < entries.length; i += PARALLEL)
        await Promise.all(entries.slice(i, i + PARALLEL).map(async (e) => flags.set(e.hash, await this.blob(e))));
      const lines = [...manifest].map(([p, e]) => `${p}\t${e.hash}\t${e.contentType}\t${flags.get(e.hash)}`);
      await this.atomically(index, lines.join("\n"));
      return true;
    } catch (err) {
      this.indexes.delete(deploymentId);
      throw err;
    }
  }

  /** one content and its variants on disk; its flags: v (compressible: Vary), b / g (a smaller br / gzip) */
  private async blob(e: StaticFileEntry): Promise<string> {
    const file = this.blobPath(e.hash);
    const shrinks = compressible(e.contentType, e.size, this.opts.cacheBytes);
    const have = async (suffix: string) => (await stat(file + suffix).catch(() => null)) !== null;
    let content: Buffer | null = null;
    if (!(await have(""))) {
      content = await this.opts.content(e.hash);
      if (!content) throw new Error(`content ${e.hash} is missing from the store`);
      await this.atomically(file, content);
    }
    if (!shrinks) return "-";
    let flags = "v";
    // a variant not smaller than the original is written empty: "not used", remembered across restarts
    for (const [suffix, flag, pack] of [
      [".br", "b", compressBrotli],
      [".gz", "g", compressGzip],
    ] as const) {
      let size = (await stat(file + suffix).catch(() => null))?.size;
      if (size === undefined) {
        content ??= await this.opts.content(e.hash);
        if (!content) throw new Error(`content ${e.hash} is missing from the store`);
        const packed = await pack(content);
        const kept = packed.length < content.length ? packed : Buffer.alloc(0);
        await this.atomically(file + suffix, kept);
        size = kept.length;
      }
      if (size > 0) flags += flag;
    }
    return flags;
  }

  private blobPath(hash: string): string {
    return path.join(this.opts.dir, "blobs", hash.slice(0, 2), hash);
  }

  private async atomically(file: string, data: string | Buffer): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = path.join(this.opts.dir, "tmp", `${randomBytes(8).toString("hex")}`);
    await mkdir(path.dirname(tmp), { recursive: true });
    await writeFile(tmp, data);
    await rename(tmp, file);
  }

  /** Drops indexes no host used for KEEP_UNUSED_MS, then blobs no kept index names. */
  sweep(now = Date.now()): Promise<void> {
    const run = this.sweeping.then(() => this.collect(now));
    this.sweeping = run.catch((err: unknown) => this.opts.log.warn({ err }, "edge nginx: static sweep failed"));
    return this.sweeping;
  }

  private async collect(now: number): Promise<void> {
    await Promise.all(this.materialising.values());
    const live = new Set([...this.pushed.values(), ...this.pinned.values()]);
    const dir = path.join(this.opts.dir, "deployments");
    for (const id of await readdir(dir).catch(() => [] as string[])) {
      if (live.has(id) || now - (this.used.get(id) ?? 0) < KEEP_UNUSED_MS) continue;
      await rm(path.join(dir, id), { force: true });
      this.indexes.delete(id);
      this.used.delete(id);
    }
    const kept = new Set<string>();
    for (const hashes of this.indexes.values()) for (const h of hashes) kept.add(h);
    const blobs = path.join(this.opts.dir, "blobs");
    for (const fan of await readdir(blobs).catch(() => [] as string[]))
      for (const name of await readdir(path.join(blobs, fan)).catch(() => [] as string[]))
        if (!kept.has(name.replace(/\.(br|gz)$/, ""))) await rm(path.join(blobs, fan, name), { force: true });
    await rm(path.join(this.opts.dir, "tmp"), { recursive: true, force: true });
  }
}
