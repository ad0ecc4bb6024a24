import type { AddressInfo } from "node:net";
import { createTestApp, type TestApp, type TestAppOptions } from "../helpers/app.js";

/** A test app listening on a loopback port, for clients that speak HTTP (SDK, CLI, MCP). */
export async function listeningApp(opts: TestAppOptions = {}): Promise<TestApp & { baseUrl: string }> {
  const t = await createTestApp(opts);
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = t.app.server.address() as AddressInfo;
  return { ...t, baseUrl: `http://127.0.0.1:${port}` };
}
