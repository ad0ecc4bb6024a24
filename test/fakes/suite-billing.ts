import type { FakeRequest, FakeResponse } from "./http.js";

/** The marketplace-style metering API (billing part: to be built). Answers null for paths it does not serve. */
export function fakeSuiteBilling() {
  return {
    handle: async (_req: FakeRequest): Promise<FakeResponse | null> => null,
  };
}
export type FakeBilling = ReturnType<typeof fakeSuiteBilling>;
