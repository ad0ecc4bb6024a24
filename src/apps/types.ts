import type { Static } from "@sinclair/typebox";
import type { PodCreateBody, PodPatchBody } from "./routes/bodies.js";
import type { EnvDoc } from "./secrets/env.js";

/** A pod as a request describes it (POST /v1/pods, a template, a group member): the create body's type. */
export type PodInput = Static<typeof PodCreateBody> & {
  /** secrets copied from a group or template, keeping their fingerprints and setters (src/apps/secrets/env.ts) */
  inherited_secrets?: Pick<EnvDoc, "secret" | "meta">;
};

/** What a rolling update may change (PATCH /v1/pods/{id}). */
export type PodPatch = Static<typeof PodPatchBody>;
