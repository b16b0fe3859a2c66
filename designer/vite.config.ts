import { defineConfig } from "vite";
import { fileURLToPath } from "node:url";

// The IR schema is generated from the Rust model (fixtures/schema/); the
// inspector's forms are built from it, so it is bundled from its one copy.
const schemaPath = fileURLToPath(new URL("../fixtures/schema/ir-v2.schema.json", import.meta.url));
const repoRoot = fileURLToPath(new URL("..", import.meta.url));

export default defineConfig({
  // Relative asset URLs: the svc binary serves dist/ at `/`.
  base: "./",
  publicDir: false,
  resolve: { alias: { "@ir-schema": schemaPath } },
  // JSX through esbuild (no Babel plugin: nothing needs Fast Refresh badly enough).
  esbuild: { jsx: "automatic", legalComments: "none" },
  server: {
    fs: { allow: [repoRoot] },
    // `npm run dev` against a running `svc design --port 7300`.
    // The server refuses foreign Host/Origin headers, so the proxy rewrites
    // Host and drops Origin.
    proxy: {
      "/api": {
        target: "http://127.0.0.1:7300",
        changeOrigin: true,
        configure: (proxy) => proxy.on("proxyReq", (req) => req.removeHeader("origin")),
      },
    },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    // Deterministic output: content-hashed names, no manifest, no timestamps.
    manifest: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 2000,
    target: "es2022",
    modulePreload: { polyfill: false },
    rollupOptions: {
      // React Flow's "use client" marks server-component boundaries; meaningless here.
      onwarn(warning, warn) {
        if (warning.code === "MODULE_LEVEL_DIRECTIVE") return;
        warn(warning);
      },
      output: {
        entryFileNames: "assets/[name]-[hash].js",
        chunkFileNames: "assets/[name]-[hash].js",
        assetFileNames: "assets/[name]-[hash][extname]",
      },
    },
  },
});
