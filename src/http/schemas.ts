import { Type, type TSchema } from "@sinclair/typebox";

/** OpenAPI 3.0 has no "null" type; it spells optional-null as nullable:true, which Ajv also understands. */
export const Nullable = <T extends TSchema>(schema: T) =>
  Type.Unsafe<T["static"] | null>({ ...schema, nullable: true });

export const Timestamp = Type.String({ format: "date-time" });
export const Id = Type.String({ format: "uuid" });

export const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** Bodies of mutations reject unknown fields. */
export const Body = <P extends Parameters<typeof Type.Object>[0]>(props: P) =>
  Type.Object(props, { additionalProperties: false });

export const NoContent = Type.Null({ description: "No content" });
