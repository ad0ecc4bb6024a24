import type { VolumeRef } from "./volumes/attach.js";
import type { EnvDoc } from "./secrets/env.js";

/** A pod as a request describes it (POST /v1/pods, a template, a group member). */
export interface PodInput {
  name?: string;
  slug?: string;
  template?: string;
  image?: string;
  port?: number | null;
  command?: string[] | null;
  env?: Record<string, string>;
  /** secret values (src/apps/secrets/env.ts): sealed, never shown again; null removes one on a change */
  secret_env?: Record<string, string | null>;
  /** secrets copied from a group or template, keeping their fingerprints and setters */
  inherited_secrets?: Pick<EnvDoc, "secret" | "meta">;
  size?: string;
  volumes?: VolumeRef[];
  databases?: string[];
  /** an organization's external host (company pods only; src/orgs/hosts) */
  host_id?: string;
  /** or any online external host of the organization carrying all these labels */
  host_labels?: Record<string, string>;
}

export type PodPatch = Pick<PodInput, "image" | "env" | "secret_env" | "size" | "port" | "command">;
