import { test } from "node:test";
import assert from "node:assert/strict";
import { DockerfileError, externalImages } from "../../src/builds/dockerfile.js";

/** The images a Dockerfile reads from outside the build, which the runner checks and pulls before building. */
test("external images: bases, --from sources, stages, ARG defaults, heredocs, continuations", () => {
  const text = `# syntax=docker/dockerfile:1
ARG BASE=127.0.0.1:5000/u-abc/base
ARG TAG="1.2"
FROM \${BASE}:$TAG AS build
RUN <<EOF
FROM not-an-instruction
EOF
COPY --from=docker.io/library/alpine:3 /etc/os-release /x
FROM scratch
COPY --from=build /out /out
COPY --from=0 /out /out2
RUN --mount=type=bind,from=ghcr.io/acme/tools:1,target=/t \\
    echo hi
from   --platform=linux/amd64   busybox:1.36 as final
`;
  assert.deepEqual(externalImages(text), [
    "127.0.0.1:5000/u-abc/base:1.2",
    "docker.io/library/alpine:3",
    "ghcr.io/acme/tools:1",
    "busybox:1.36",
  ]);
  assert.deepEqual(externalImages("FROM scratch\nCOPY x /x\n"), []);
});

test("refused: no FROM, a variable no ARG default sets", () => {
  assert.throws(() => externalImages("RUN echo\n"), DockerfileError);
  assert.throws(() => externalImages("FROM $NOPE\n"), /no ARG with a default/);
  assert.throws(() => externalImages("ARG X\nFROM $X\n"), /no ARG with a default/);
  assert.throws(() => externalImages("FROM ${X:-alpine}\n"), DockerfileError);
});
