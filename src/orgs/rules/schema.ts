import { Type, type Static } from "@sinclair/typebox";

/**
 * The shapes deploy rules name (`allowed_shapes`, presets): what admission sees, by the kind each area admits.
 * pod-group: a pod group and its members (admitted as kind pod with shape pod-group); site: a static site (kind
 * static-site) and its deployments.
 */
export const SHAPES = ["pod", "pod-group", "site", "database", "volume", "bucket", "build", "sandbox"] as const;
export type Shape = (typeof SHAPES)[number];

/**
 * Features a request turns on (AdmissionRequest.features): ha and pooling of a database, autoscale of a pod group
 * (replica_max above replica_min), volume (a pod mounting volumes), network (a sandbox with network).
 */
export const FEATURES = ["ha", "pooling", "autoscale", "volume", "network"] as const;
export type Feature = (typeof FEATURES)[number];

const Shape = Type.Union(
  SHAPES.map((s) => Type.Literal(s)),
  { description: SHAPES.join(", ") },
);
const Feature = Type.Union(FEATURES.map((f) => Type.Literal(f)));
const Name = Type.String({ minLength: 1, maxLength: 64 });
const list = <T extends Parameters<typeof Type.Array>[0]>(item: T, description: string, maxItems = 50) =>
  Type.Optional(Type.Array(item, { minItems: 1, maxItems, uniqueItems: true, description }));

export const Preset = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 60 }),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    shape: Shape,
    size: Type.Optional(Name),
    image: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    replicas: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    storage_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    features: list(Feature, "features the preset turns on"),
  },
  { additionalProperties: false, description: "A ready-made deployment that agents and people start from." },
);
export type Preset = Static<typeof Preset>;

/**
 * An organization's deploy guardrails (orgs.deploy_rules). Every field is optional: absent means unrestricted, so
 * `{}` (the default) allows everything. Lists must not be empty (leave the field out instead).
 */
export const DeployRules = Type.Object(
  {
    allowed_shapes: list(Shape, "what members may create in the company context; absent: every shape"),
    max_app_size: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          "the largest pod size (pods and pod groups), sizes ranked by catalog price: nano < micro < cpu-small ...",
      }),
    ),
    gpu_allowed: Type.Optional(Type.Boolean({ description: "false: no GPU sizes" })),
    max_gpu: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10_000,
        description: "GPUs one app may hold (a group: per replica × replica_max)",
      }),
    ),
    database_sizes: list(Name, "database sizes allowed (dev, basic, pro, business)"),
    features: Type.Optional(
      Type.Object(
        {
          ha: Type.Optional(Type.Boolean()),
          pooling: Type.Optional(Type.Boolean()),
          autoscale: Type.Optional(Type.Boolean()),
          volume: Type.Optional(Type.Boolean()),
          network: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false, description: "false forbids the feature; absent or true allows it" },
      ),
    ),
    image_prefixes: list(
      Type.String({ minLength: 1, maxLength: 300 }),
      "images must start with one of these (as written, or in full form such as docker.io/library/nginx)",
    ),
    limits: Type.Optional(
      Type.Object(
        {
          max_replicas: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 1000, description: "a pod group's replica_max" }),
          ),
          max_storage_gb: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 100_000, description: "storage of one database or volume" }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    regions: list(Type.String({ minLength: 1, maxLength: 64 }), "regions allowed, for resources placed in a region"),
    summary: Type.Optional(
      Type.String({ maxLength: 4000, description: "the rules in words, for agents; generated when absent" }),
    ),
    presets: Type.Optional(Type.Array(Preset, { maxItems: 50 })),
  },
  { additionalProperties: false },
);
export type DeployRules = Static<typeof DeployRules>;

export const DeployRulesView = Type.Object({
  rules: DeployRules,
  summary: Type.String({ description: "the admin's summary, or one generated from the rules" }),
  summary_generated: Type.Boolean(),
  updated_at: Type.String(),
});
