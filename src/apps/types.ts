import type { VolumeRef } from "./volumes/attach.js";
import type { Checks, Deploy } from "./checks/spec.js";

/** A pod as a request describes it (POST /v1/pods, a template, a group member). */
export interface PodInput {
  name?: string;
  slug?: string;
  template?: string;
  image?: string;
  port?: number | null;
  command?: string[] | null;
  env?: Record<string, string>;
  size?: string;
  volumes?: VolumeRef[];
  databases?: string[];
  /** an organization's external host (company pods only; src/orgs/hosts) */
  host_id?: string;
  /** or any online external host of the organization carrying all these labels */
  host_labels?: Record<string, string>;
  /** declared startup/readiness/liveness checks (issue 29); null clears them (default TCP readiness) */
  checks?: Checks | null;
  /** rollout settings: stop grace, rollout deadline */
  deploy?: Deploy;
}

export type PodPatch = Pick<PodInput, "image" | "env" | "size" | "port" | "command" | "checks" | "deploy">;
