import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Where `npm run console:build` puts the console (packages/console/dist); CONSOLE_DIST_DIR overrides it. */
export const DEFAULT_DIST_DIR = fileURLToPath(new URL("../../packages/console/dist", import.meta.url));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
};

export interface Asset {
  body: Buffer;
  type: string;
}

export interface ConsoleAssets {
  index: Asset;
  /** files under assets/ by name; their names carry a content hash, so they are cached for a year */
  hashed: Map<string, Asset>;
  /** other top-level files (favicon) */
  root: Map<string, Asset>;
}

/** What the console area keeps per process: its built files, read on first use. */
export interface ConsoleState {
  assets: () => Promise<ConsoleAssets | null>;
}

const typeOf = (name: string) => TYPES[path.extname(name).toLowerCase()] ?? "application/octet-stream";

async function filesOf(dir: string): Promise<Map<string, Asset>> {
  const out = new Map<string, Asset>();
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries)
    if (e.isFile()) out.set(e.name, { body: await readFile(path.join(dir, e.name)), type: typeOf(e.name) });
  return out;
}

/**
 * The built console, read into memory once (a few hundred kilobytes). Null while it is not built, so the
 * server still starts and answers `/` with a page saying how to build it; read again on the next request.
 */
export function consoleAssets(dir: string): () => Promise<ConsoleAssets | null> {
  let loaded: ConsoleAssets | null = null;
  return async () => {
    if (loaded) return loaded;
    const root = await filesOf(dir);
    const index = root.get("index.html");
    if (!index) return null;
    root.delete("index.html");
    loaded = { index, hashed: await filesOf(path.join(dir, "assets")), root };
    return loaded;
  };
}
