/** What the builds area provides the others (capability "rebuilds") and tells them (contribution "buildObservers"). */
import type { Principal } from "../auth/principal.js";
import type { Owner } from "../kernel/owner.js";
import type { AppRef } from "../apps/contract.js";

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    rebuilds: Rebuilds;
    /** builds of a source archive another area fetched itself (preview environments, src/previews) */
    sourceBuilds: SourceBuilds;
  }
  interface Contributions {
    buildObservers: BuildObserver;
  }
}

/** A base image a build pulled, with the manifest digest its registry named just before the pull (null: unknown). */
export interface BuildBaseImage {
  image: string;
  digest: string | null;
}

/** A build that has ended, as the builds area tells its observers (base-image refresh, issue 14). */
export interface EndedBuild {
  id: string;
  owner: Owner;
  /** the account that created it */
  accountId: string;
  app: AppRef | null;
  status: "succeeded" | "failed" | "cancelled";
  /** the pushed image and its manifest digest (null when it was not pushed) */
  image: string | null;
  digest: string | null;
  baseImages: BuildBaseImage[];
}

/**
 * Told of every build's end (contribution "buildObservers"). Answering true for a succeeded build that named an app keeps
 * its source on the build host for `Rebuilds.rebuild` (the newest kept build of an app replaces older ones).
 */
export interface BuildObserver {
  ended(build: EndedBuild): Promise<boolean | void>;
}

/** The builds area's services for others (kernel.use("rebuilds")): base-image digests, rebuilds of a kept source. */
export interface Rebuilds {
  /** the manifest digest the image's registry names now, with the owner's pull access; null: not in a registry */
  digestOf(owner: Owner, image: string): Promise<string | null>;
  /**
   * A new build of a kept source (same Dockerfile, context and app, base images pulled again), queued on the source's
   * host and rolled to its app on success. 409 conflict when the source is no longer kept; the build's admission runs.
   */
  rebuild(p: Principal, buildId: string): Promise<{ id: string; tag: string }>;
  /** the builder this platform runs builds with */
  builder(): Promise<{ name: string; version: string | null; available: boolean; problem: string | null }>;
}

/** A build's progress as another area follows it. */
export interface BuildProgress {
  status: "awaiting_upload" | "queued" | "building" | "pushing" | "succeeded" | "failed" | "cancelled" | string;
  /** the pushed image (registry/namespace/repository:build-<id>) once succeeded */
  image: string | null;
  reason: string | null;
}

/**
 * Builds from a tar.gz source held in memory (capability "sourceBuilds"): the same admission, unpacking limits and
 * runner as an uploaded source, without an upload URL. The build is queued at once on this host.
 */
export interface SourceBuilds {
  fromArchive(
    p: Principal,
    source: { archive: Buffer; dockerfile: string; contextPath: string },
  ): Promise<{ id: string }>;
  /** null when the build is not the principal's owner's */
  progress(p: Principal, id: string): Promise<BuildProgress | null>;
}
