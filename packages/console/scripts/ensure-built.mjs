// `npm start` runs this first: builds the console once when packages/console/dist is missing, so
// `npm ci && npm start` serves it with no extra step. `npm run console:build` rebuilds it on purpose.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
if (!existsSync(new URL("../dist/index.html", import.meta.url))) {
  console.log("building the web console (packages/console) once...");
  const { build } = await import("vite");
  await build({ root, logLevel: "warn" });
}
