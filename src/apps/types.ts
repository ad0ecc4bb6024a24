import type { VolumeRef } from "./volumes/attach.js";

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
}

export type PodPatch = Pick<PodInput, "image" | "env" | "size" | "port" | "command">;
