import { startFakeServer, type FakeRequest, type FakeResponse } from "./http.js";
import { fakeSuiteDirectory, type FakeDirectory } from "./suite-directory.js";
import { fakeSuiteBilling, type FakeBilling } from "./suite-billing.js";

/**
 * The suite's directory and metering APIs in their documented shape (src/suite/README.md), on one local server:
 * tests set `directory` (units, members) and `billing` (allowances) and read what the platform sent. The identity
 * provider is a real OpenID Connect server (suite-idp.ts), not part of this fake.
 */
export async function startFakeSuite(opts: { token?: string } = {}) {
  const token = opts.token ?? "suite-service-token";
  const directory = fakeSuiteDirectory();
  const billing = fakeSuiteBilling();
  const server = await startFakeServer(async (req: FakeRequest): Promise<FakeResponse> => {
    if (req.headers.authorization !== `Bearer ${token}`)
      return { status: 401, body: { code: "UNAUTHORIZED", description: "bad service token" } };
    return (
      (await directory.handle(req)) ??
      (await billing.handle(req)) ?? { status: 404, body: { code: "NOT_FOUND", description: req.path } }
    );
  });
  return { ...server, token, directory: directory as FakeDirectory, billing: billing as FakeBilling };
}
