import { Type } from "@sinclair/typebox";
import { Nullable } from "../../http/schemas.js";

const NAME = "^[A-Za-z_][A-Za-z0-9_]{0,127}$";

/** request: secret values by name; on a change null removes one, names not given stay as they are */
export const SecretEnv = Type.Record(
  Type.String({ pattern: NAME }),
  Nullable(Type.String({ minLength: 1, maxLength: 32768 })),
  {
    description:
      "secret environment variables: sealed at rest, never shown again (only a fingerprint), masked in logs and exec output; on a change, given names are set, null removes one, others stay",
    additionalProperties: false,
    maxProperties: 128,
  },
);

/** answer: what is known of each secret without its value */
export const SecretEnvView = Type.Record(
  Type.String(),
  Type.Object({
    fingerprint: Type.String({ description: "HMAC-SHA256 of the value under a platform-derived key (first 128 bits)" }),
    set_by: Type.String(),
    set_at: Type.String({ format: "date-time" }),
  }),
  { description: "secret env names with their fingerprints; values are never returned" },
);
