import { execFile } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import type { Owner } from "../kernel/owner.js";
import { systemPrincipal } from "../auth/principal.js";
import { asApiError } from "../http/errors.js";
import { runStep, type Step } from "./buildah.js";
import { makeCgroup, type BuildCgroup } from "./cgroup.js";
import { DockerfileError, externalImages } from "./dockerfile.js";
import type { BuildsConfig } from "./config.js";
import { findDockerfile } from "./upload.js";
import { manifestDigest } from "./digest.js";
import type { Outbound } from "../net/outbound.js";
import { tellObservers } from "./observe.js";
import type { BuildBaseImage } from "./contract.js";
import * as repo from "./repo.js";
import { maskSecrets, type SecretBox } from "../kernel/secrets.js";
import { longestMasked, openBuildSecrets } from "./build-secrets.js";

export interface JobDeps {
  db: Db;
  /** opens the build's sealed build secrets */
  secrets: SecretBox;
  kernel: Pick<Kernel, "use" | "all">;
  config: BuildsConfig;
  log: FastifyBaseLogger;
  /** DATA_DIR/builds */
  root: string;
  /** the guarded client base-image digests are asked through (registries named in users' Dockerfiles) */
  outbound: Outbound;
}

/** How a build was stopped from outside its steps: a cancel (recorded already), its timeout, or shutdown. */
export interface Abort {
  status: "failed" | "cancelled";
  reason: string;
}

/** One running build: its current step, and the abort that ended it, if one did. */
export interface Control {
  step: Step | null;
  aborted: Abort | null;
}

class Stopped extends Error {}

/** A build's failure the user can act on; its message is the build's status_reason. */
export class BuildFailure extends Error {}

export const workDirOf = (root: string, id: string) => path.join(root, id);
/** where the runner writes a build's image before pushing it (its own image store, so never shared) */
const localName = (id: string) => `localhost/build:${id}`;
const isLoopback = (image: string) => /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?\//.test(image);

let hostStore: Promise<string> | null = null;
/** `[driver@graphroot+runroot]` of the host's default image store, for base images from it (APPS_ALLOW_LOCAL_IMAGES) */
function hostStoreSpec(buildah: string): Promise<string> {
  hostStore ??= new Promise((resolve, reject) =>
    execFile(
      buildah,
      ["info", "--format", "{{.store.GraphDriverName}}@{{.store.GraphRoot}}+{{.store.RunRoot}}"],
      { timeout: 30_000 },
      (err, stdout) => (err ? reject(err) : resolve(`[${stdout.trim()}]`)),
    ),
  ).catch((err) => {
    hostStore = null;
    throw err;
  }) as Promise<string>;
  return hostStore;
}

/** Docker Hub names as the registry spells them: busybox → docker.io/library/busybox. */
function qualified(image: string): string {
  const first = image.split("/")[0];
  if (image.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost")) return image;
  return image.includes("/") ? `docker.io/${image}` : `docker.io/library/${image}`;
}

/**
 * Buffers builder output and appends it to the build's bounded log about once per poll interval, with the
 * build secrets masked. The last (longest secret - 1) characters wait for the next flush, so a value split
 * between two chunks of output is still masked.
 */
class LogSink {
  private buffer = "";
  private chain: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private readonly holdBack: number;

  constructor(
    private readonly d: JobDeps,
    private readonly id: string,
    private readonly secrets: Record<string, string>,
  ) {
    this.timer = setInterval(() => void this.flush(), d.config.pollMs).unref();
    this.holdBack = Math.max(0, longestMasked(secrets) - 1);
  }

  write = (text: string) => {
    this.buffer += text;
    if (this.buffer.length > 64 * 1024) void this.flush();
  };

  flush(final = false): Promise<void> {
    const masked = maskSecrets(this.buffer, this.secrets);
    const keep = final ? 0 : Math.min(this.holdBack, masked.length);
    const text = masked.slice(0, masked.length - keep);
    this.buffer = masked.slice(masked.length - keep);
    if (text)
      this.chain = this.chain
        .then(() => repo.appendLog(this.d.db, this.id, text, this.d.config.logBytes))
        .catch((err) => this.d.log.warn({ err, build: this.id }, "build log not stored"));
    return this.chain;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush(true);
  }
}

/**
 * Runs one claimed build to its end: pull the Dockerfile's external images (each checked against the owner's
 * image access), build without network, push to the owner's namespace, roll the app if one was named. Every
 * step runs in the build's working directory with an image store of its own, so builds never see each
 * other's images, and the directory is removed at the end whatever happened.
 */
export async function runBuild(d: JobDeps, row: repo.BuildRow, ctl: Control): Promise<void> {
  const { config } = d;
  const owner: Owner = { kind: row.owner_kind, id: row.owner_id };
  const dir = workDirOf(d.root, row.id);
  const buildSecrets = openBuildSecrets(d.secrets, row.build_secrets_sealed);
  const log = new LogSink(d, row.id, buildSecrets);
  let cgroup: BuildCgroup | null = null;
  const store = [
    "--root",
    path.join(dir, "storage"),
    "--runroot",
    path.join(dir, "run"),
    "--storage-driver",
    "overlay",
  ];
  const authfile = path.join(dir, "auth.json");
  const note = (text: string) => log.write(`==> ${text}\n`);
  // base-image refresh (issue 14): each base image's digest as resolved just before its pull, and what was pushed
  const bases: BuildBaseImage[] = [];
  let pushed: { image: string; digest: string | null } | null = null;
  let told = false;

  const step = async (phase: string, argv: string[], isolateNetwork: boolean): Promise<void> => {
    if (ctl.aborted) throw new Stopped();
    const s = runStep({
      argv: [config.buildah, ...store, ...argv],
      env: { TMPDIR: path.join(dir, "tmp"), BUILDAH_ISOLATION: "chroot" },
      output: log.write,
      cgroupProcs: cgroup?.procs,
      isolateNetwork,
      nice: config.nice,
    });
    ctl.step = s;
    await repo.setPhase(d.db, row.id, phase, s.pid);
    const { code, signal } = await s.done;
    ctl.step = null;
    if (ctl.aborted) throw new Stopped();
    if (code !== 0) {
      const oom = (await cgroup?.oomKilled()) ? ` (out of memory: the build's limit is ${config.memoryMb} MiB)` : "";
      throw new BuildFailure(`${phase} failed: the builder exited with ${signal ?? `code ${code}`}${oom}`);
    }
  };
  const auth = (registry: string, creds: { username: string; password: string } | null) =>
    writeFile(
      authfile,
      JSON.stringify({
        auths: creds
          ? { [registry]: { auth: Buffer.from(`${creds.username}:${creds.password}`).toString("base64") } }
          : {},
      }),
      { mode: 0o600 },
    );

  try {
    await mkdir(path.join(dir, "tmp"), { recursive: true });
    const context = path.join(dir, "context", row.context_path);
    const dockerfile = await findDockerfile(context, row.dockerfile).catch((err) => {
      throw new BuildFailure(asApiError(err)?.message ?? String(err));
    });
    const images = externalImages(await readFile(dockerfile, "utf8"));
    const made = await makeCgroup(row.id, { memoryMb: config.memoryMb, cpus: config.cpus, pids: config.pids });
    if ("problem" in made) note(made.problem);
    else cgroup = made;

    for (const image of images) {
      note(`pulling ${image}`);
      const creds = await (d.kernel.use("imageAccess")?.pullFor(owner, image) ?? Promise.resolve(null)).catch((err) => {
        throw new BuildFailure(`base image ${image}: ${asApiError(err)?.message ?? String(err)}`);
      });
      const local = image.startsWith("localhost/");
      const registry = image.split("/")[0];
      await auth(registry, creds);
      // recorded before the pull: a base pushed meanwhile shows up as a (harmless) proposal, never as a missed one
      const baseDigest = await manifestDigest(image, creds, d.outbound).catch((err: Error) => {
        note(`the digest of ${image} was not recorded: ${err.message}`);
        return null;
      });
      bases.push({ image, digest: baseDigest });
      const source = local ? `containers-storage:${await hostStoreSpec(config.buildah)}${image}` : qualified(image);
      const tls = isLoopback(image) ? ["--tls-verify=false"] : [];
      await step("pulling", ["pull", "--authfile", authfile, ...tls, "--quiet", source], false);
      // the name the Dockerfile uses, so `FROM busybox` finds docker.io/library/busybox in the build's store
      if (!local && source !== image) await step("pulling", ["tag", source, image], false);
    }

    // build-time values: arguments on the command line, each secret in a 0600 file of the build's directory
    const buildValues: string[] = [];
    for (const [k, v] of Object.entries(row.build_args ?? {})) buildValues.push("--build-arg", `${k}=${v}`);
    if (Object.keys(buildSecrets).length) await mkdir(path.join(dir, "secrets"), { mode: 0o700 });
    for (const [k, v] of Object.entries(buildSecrets)) {
      const file = path.join(dir, "secrets", k);
      await writeFile(file, v, { mode: 0o600 });
      buildValues.push("--secret", `id=${k},src=${file}`);
    }
    note(`building (no network in RUN steps; limits: rlimits${cgroup ? ", the build's cgroup" : ""}, the timeout)`);
    await step(
      "building",
      [
        "bud",
        "--isolation",
        "chroot",
        "--pull=never",
        "--ulimit",
        `data=${config.memoryMb * 1024 * 1024}:${config.memoryMb * 1024 * 1024}`,
        "--ulimit",
        `cpu=${config.timeoutSeconds}:${config.timeoutSeconds}`,
        ...buildValues,
        "--file",
        dockerfile,
        "--tag",
        localName(row.id),
        context,
      ],
      true,
    );

    const repository = row.app_slug ?? "build";
    const access = d.kernel.use("imageAccess");
    if (!access?.pushFor) throw new BuildFailure("no image registry to push to");
    const push = await access.pushFor(owner, repository).catch((err) => {
      throw new BuildFailure(`pushing: ${asApiError(err)?.message ?? String(err)}`);
    });
    const image = `${push.registry}/${push.namespace}/${repository}:build-${row.id}`;
    note(`pushing ${image}`);
    await auth(push.registry, push);
    const digestFile = path.join(dir, "digest");
    await step(
      "pushing",
      [
        "push",
        "--authfile",
        authfile,
        "--tls-verify=false",
        "--digestfile",
        digestFile,
        localName(row.id),
        `docker://${image}`,
      ],
      false,
    );
    const digest = (await readFile(digestFile, "utf8")).trim() || null;
    pushed = { image, digest };

    if (row.app_kind && row.app_id && row.app_slug) {
      note(`deploying to ${row.app_kind} ${row.app_slug}`);
      await repo.setPhase(d.db, row.id, "deploying", null);
      const error = await deploy(d, row, image);
      if (error) {
        await repo.recordDeploy(d.db, row.id, error);
        note(`deploy failed: ${error}`);
        await repo.finish(d.db, row.id, "failed", {
          reason: `the image was built and pushed (${image}), but updating the app failed: ${error}`,
          image,
          digest,
        });
        return;
      }
      await repo.recordDeploy(d.db, row.id, null);
    }
    note(`done: ${image}@${digest}`);
    told = true; // base-image refresh: observers hear of the success before anyone can read it
    await tellObservers(d, row, { bases, pushed, dir, status: "succeeded" });
    await repo.finish(d.db, row.id, "succeeded", { image, digest });
  } catch (err) {
    if (err instanceof Stopped || ctl.aborted) {
      // a cancel recorded itself; a timeout or shutdown is recorded here
      const a = ctl.aborted!;
      note(a.status === "cancelled" ? "cancelled" : a.reason);
      if (a.status === "failed") await repo.finish(d.db, row.id, "failed", { reason: a.reason });
      return;
    }
    const reason =
      err instanceof BuildFailure || err instanceof DockerfileError ? err.message : `internal error: ${String(err)}`;
    if (!(err instanceof BuildFailure || err instanceof DockerfileError))
      d.log.error({ err, build: row.id }, "build failed unexpectedly");
    note(`failed: ${reason}`);
    await repo.finish(d.db, row.id, "failed", { reason });
  } finally {
    ctl.step?.kill();
    await log.close();
    await cgroup?.remove().catch(() => {});
    if (!told) await tellObservers(d, row, { bases, pushed, dir }); // may keep the source for rebuilds before it goes
    await rm(dir, { recursive: true, force: true }).catch((err) =>
      d.log.warn({ err, build: row.id }, "build working directory not removed; the next start removes it"),
    );
  }
}

/** Rolls the build's app to the image, acting for the account that created the build; the error's text or null. */
async function deploy(d: JobDeps, row: repo.BuildRow, image: string): Promise<string | null> {
  const apps = d.kernel.use("appImages");
  if (!apps) return "this platform has no apps area";
  const principal = systemPrincipal({
    accountId: row.account_id,
    owner: { kind: row.owner_kind, id: row.owner_id },
    email: "",
    displayName: "builder",
    audit: {
      action: "deployBuild",
      target: row.app_id,
      ip: "builder",
      requestId: `build:${row.id}`,
      status: 200,
      written: false,
    },
  });
  try {
    await apps.deploy(principal, { kind: row.app_kind!, id: row.app_id!, slug: row.app_slug! }, image);
    return null;
  } catch (err) {
    return asApiError(err)?.message ?? String(err);
  }
}
