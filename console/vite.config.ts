import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The console is served by the gateway at / (same origin as /api): built into dist/, which the
// gateway serves (CONSOLE_DIR). The SDK is taken from its TypeScript source ("kiln-source").
export default defineConfig({
  plugins: [react()],
  resolve: { conditions: ["kiln-source"] },
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true, target: "es2022" },
  server: { proxy: { "/api": "http://127.0.0.1:8080", "/v1": "http://127.0.0.1:8080" } },
});
