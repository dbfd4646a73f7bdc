import { defineConfig } from "vite";

// The bundle lands in dist/, which is committed and embedded in the gateway binary
// (crates/gateway/build.rs). Asset names carry content hashes, so the gateway can serve them
// as immutable.
export default defineConfig({
  base: "/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: true,
  },
});
