import { Type } from "@sinclair/typebox";
import { Body } from "../http/schemas.js";

// the request bodies the service takes as they are (its input types are their static types)
const PathText = Type.String({ minLength: 1, maxLength: 255 });

const ValueName = Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,127}$" });

/** POST /v1/builds */
export const CreateBuildBody = Body({
  app: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "pod or pod group id or slug" })),
  dockerfile: Type.Optional({
    ...PathText,
    description: "path of the Dockerfile inside the build context; default Dockerfile",
  }),
  context_path: Type.Optional({
    ...PathText,
    description: "directory of the archive used as the build context; default the archive's root",
  }),
  build_args: Type.Optional(
    Type.Record(ValueName, Type.String({ maxLength: 32768 }), {
      additionalProperties: false,
      maxProperties: 64,
      description:
        "build arguments (`ARG NAME` in the Dockerfile, `--build-arg`): plain, shown back; the pod's runtime env is never passed to a build",
    }),
  ),
  build_secrets: Type.Optional(
    Type.Record(ValueName, Type.String({ minLength: 1, maxLength: 32768 }), {
      additionalProperties: false,
      maxProperties: 64,
      description:
        "build secrets, read in the Dockerfile with `RUN --mount=type=secret,id=NAME` (at /run/secrets/NAME): sealed at rest, never in a layer, masked in the build log, shown back only as fingerprints",
    }),
  ),
});

/** POST /v1/builds/{id}/events */
export const BuildEventBody = Body({
  phase: Type.String({ minLength: 1, maxLength: 100 }),
  level: Type.Optional(
    Type.Union([Type.Literal("debug"), Type.Literal("info"), Type.Literal("warn"), Type.Literal("error")], {
      default: "info",
    }),
  ),
  message: Type.String({ maxLength: 4000 }),
  detail: Type.Optional(Type.Unknown()),
});
