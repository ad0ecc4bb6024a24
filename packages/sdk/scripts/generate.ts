/**
 * `npm run sdk:generate`: exports /v1/openapi.json from the platform and renders the SDK's checked-in
 * files (openapi.json, src/schema.d.ts). By default it starts the API server of this checkout (its own
 * embedded PostgreSQL in a temporary directory) and stops it again; `--from <base url>` reads a server
 * that is already running instead. Run it after any route change: CI fails while they differ.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { renderSdkFiles, SDK_DIR } from "./render.js";

const ROOT = path.resolve(SDK_DIR, "../..");

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function fetchDocument(base: string, deadline: number): Promise<unknown> {
  for (;;) {
    try {
      const res = await fetch(new URL("/v1/openapi.json", base));
      if (res.ok) return await res.json();
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${base}/v1/openapi.json did not answer`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Starts this checkout's server on a free port with a throw-away data directory and reads its document. */
async function exportFromLocalServer(): Promise<unknown> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "platform-sdk-generate-"));
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "src/main.ts")], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "warn" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  try {
    return await fetchDocument(`http://127.0.0.1:${port}`, Date.now() + 120_000);
  } finally {
    child.kill("SIGTERM");
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

const fromIndex = process.argv.indexOf("--from");
const doc =
  fromIndex > 0 ? await fetchDocument(process.argv[fromIndex + 1], Date.now() + 10_000) : await exportFromLocalServer();
const files = await renderSdkFiles(doc);
for (const [name, text] of Object.entries(files)) {
  await writeFile(path.join(SDK_DIR, name), text);
  process.stdout.write(`wrote packages/sdk/${name} (${text.length} bytes)\n`);
}
