import type { FakeRequest, FakeResponse } from "./http.js";

/** The NAVER WORKS-style directory (directory part: to be built). Answers null for paths it does not serve. */
export function fakeSuiteDirectory() {
  return {
    handle: async (_req: FakeRequest): Promise<FakeResponse | null> => null,
  };
}
export type FakeDirectory = ReturnType<typeof fakeSuiteDirectory>;
