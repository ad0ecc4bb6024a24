import { Type } from "@sinclair/typebox";
import { Body, Nullable } from "../http/schemas.js";

/*
 * The request bodies the service takes as they are: the routes validate with them and the service's input types
 * are their static types (service-core.ts), so the two cannot drift.
 */

export const SLUG = "^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$";
export const Size = Type.Union([
  Type.Literal("dev"),
  Type.Literal("basic"),
  Type.Literal("pro"),
  Type.Literal("business"),
]);

/** scale-to-zero (src/databases/idle): bounds are checked by the service, so a wrong value gets a sentence naming them */
export const IdleStopSeconds = () =>
  Nullable(
    Type.Integer({
      description:
        "dev databases only: stop after this many seconds without client connections (DB_IDLE_MIN_SECONDS, default 60, to 30 days); the next connection starts it again. null: never",
    }),
  );

export const IdleBody = Body({ idle_stop_seconds: IdleStopSeconds() });

export const CreateBody = Body({
  name: Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 }),
  slug: Type.Optional(Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 })),
  engine: Type.Optional(Type.Literal("postgres")),
  version: Type.Optional(Type.Union([Type.Literal(16), Type.Literal(17)])),
  size: Type.Optional(Size),
  storage_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 16384 })),
  pitr_retention_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 35 })),
  idle_stop_seconds: Type.Optional(IdleStopSeconds()),
});

export const ComputeBody = Body({
  enabled: Type.Boolean(),
  min_size: Type.Optional(Size),
  max_size: Type.Optional(Size),
  cpu_threshold_pct: Type.Optional(Type.Integer({ minimum: 10, maximum: 100 })),
});

export const StorageBody = Body({
  enabled: Type.Boolean(),
  max_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 16384 })),
  threshold_pct: Type.Optional(Type.Integer({ minimum: 50, maximum: 95 })),
  step_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 })),
});
