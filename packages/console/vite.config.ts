import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Built into dist/, which the API server serves at / (src/console). Hashed file names under assets/ are cached
// for a year; no inline script or style is emitted, so the server's strict Content-Security-Policy holds.
export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, assetsInlineLimit: 0, modulePreload: { polyfill: false } },
  server: { proxy: { "/v1": "http://127.0.0.1:8080", "/console": "http://127.0.0.1:8080" } },
});
