import { execFile } from "node:child_process";
import type { Kernel } from "../kernel/kernel.js";
import type { Rebuilds } from "./contract.js";
import { builderProblem, resolveBin } from "./buildah.js";
import type { BuildsConfig } from "./config.js";
import { manifestDigest } from "./digest.js";
import type { Outbound } from "../net/outbound.js";
import type { BuildsService } from "./service.js";

let version: { bin: string; text: Promise<string | null> } | null = null;

/** `buildah --version`'s version number (asked once per process). */
function builderVersion(bin: string): Promise<string | null> {
  if (version?.bin !== bin) {
    const full = resolveBin(bin);
    version = {
      bin,
      text: full
        ? new Promise((resolve) =>
            execFile(full, ["--version"], { timeout: 15_000 }, (err, stdout) =>
              resolve(err ? null : (/version\s+(\S+)/.exec(stdout)?.[1] ?? (stdout.trim() || null))),
            ),
          )
        : Promise.resolve(null),
    };
  }
  return version.text;
}

/**
 * What the builds area offers others for base-image refresh (capability "rebuilds"; issue 14): the current digest of a
 * base image (with the owner's pull access, as a build pulls it), rebuilds of kept sources, the builder's state.
 */
export function rebuildsContract(
  svc: BuildsService,
  kernel: Pick<Kernel, "use">,
  config: BuildsConfig,
  outbound: Outbound,
): Rebuilds {
  return {
    digestOf: async (owner, image) =>
      manifestDigest(image, (await kernel.use("imageAccess")?.pullFor(owner, image)) ?? null, outbound),
    rebuild: async (p, buildId) => {
      const row = await svc.rebuild(p, buildId);
      return { id: row.id, tag: `build-${row.id}` };
    },
    builder: async () => {
      const problem = await builderProblem(config.buildah);
      return { name: "buildah", version: await builderVersion(config.buildah), available: !problem, problem };
    },
  };
}
