/**
 * Container images for the tests, built offline from Debian's busybox-static (buildah, FROM scratch):
 * built once per test run by test/run.ts (when a selected file needs them) and named to the test
 * processes through the environment. An image whose content hash tag exists is not built again.
 */
import { buildBusyboxImage, type ImageFiles } from "../../src/runtime/images.js";

export const TEST_IMAGE_PREFIX = "localhost/platform-test";

const httpd = (version: string) => ({
  tag: `${TEST_IMAGE_PREFIX}/httpd:${version}`,
  files: { "/www/index.html": `${version}\n` },
  cmd: ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"],
});

/** The shared images: environment variable → how to build it. */
const IMAGES = {
  // busybox httpd on port 8080 serving index.html "v1" / "v2" (and every busybox applet for exec)
  TEST_IMAGE_HTTPD_V1: httpd("v1"),
  TEST_IMAGE_HTTPD_V2: httpd("v2"),
};

export type TestImage = keyof typeof IMAGES;

/** The test directories whose files use these images. */
export const IMAGE_TEST_DIRS = ["apps", "runtime", "sandboxes", "registry", "bench-free", "cron"];

/** Builds every shared image (skipping those already built with the same content); returns the environment naming them. */
export async function buildTestImages(): Promise<Record<TestImage, string>> {
  const env = {} as Record<TestImage, string>;
  for (const [name, spec] of Object.entries(IMAGES) as [TestImage, (typeof IMAGES)[TestImage]][]) {
    await buildBusyboxImage(spec);
    env[name] = spec.tag;
  }
  return env;
}

/** The name of a shared image, as test/run.ts passed it (built here when a test file runs on its own). */
export async function testImage(name: TestImage): Promise<string> {
  const given = process.env[name];
  if (given) return given;
  await buildBusyboxImage(IMAGES[name]);
  return IMAGES[name].tag;
}

/**
 * Any other image a test needs: busybox plus the given files, running cmd. Tag it under
 * TEST_IMAGE_PREFIX; building again with the same content is skipped.
 */
export async function buildImage(tag: string, files: ImageFiles, cmd: string[]): Promise<string> {
  await buildBusyboxImage({ tag, files, cmd });
  return tag;
}
