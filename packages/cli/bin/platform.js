#!/usr/bin/env node
// The `platform` command. The CLI is TypeScript run through tsx's loader (a dependency of this package),
// so a clean `npm ci` is all it needs: no build step, nothing compiled to keep in sync.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
