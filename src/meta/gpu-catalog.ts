import { readFileSync } from "node:fs";
import { Type, type Static } from "@sinclair/typebox";
import { Ajv } from "ajv";
import { Nullable } from "../http/schemas.js";

export const Sku = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal("cpu"), Type.Literal("gpu")]),
  name: Type.String(),
  vcpu: Type.Integer({ minimum: 1 }),
  memory_gb: Type.Integer({ minimum: 1 }),
  gpu_model: Nullable(Type.String()),
  gpu_count: Type.Integer({ minimum: 0 }),
  price_krw_per_hour: Type.Integer({ minimum: 0 }),
});
export const GpuCatalog = Type.Object({ currency: Type.Literal("KRW"), skus: Type.Array(Sku) });
export type GpuCatalog = Static<typeof GpuCatalog>;

/** Read once at start-up; a malformed catalog stops start-up rather than serving wrong prices. */
export function loadGpuCatalog(file: string): GpuCatalog {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`configuration error: GPU_CATALOG_FILE ${file} cannot be read: ${(err as Error).message}`, {
      cause: err,
    });
  }
  // Ajv, like the HTTP layer, understands the OpenAPI "nullable" keyword the schema uses
  const validate = new Ajv({ strict: false }).compile(GpuCatalog);
  if (!validate(parsed)) {
    const first = validate.errors?.[0];
    throw new Error(
      `configuration error: GPU_CATALOG_FILE ${file} is invalid at ${first?.instancePath}: ${first?.message}`,
    );
  }
  return parsed;
}
