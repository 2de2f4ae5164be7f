import { fileURLToPath } from "node:url";
import tailwindcss from "@tailwindcss/vite";
import { tanstackRouter } from "@tanstack/router-plugin/vite";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const apiTarget = `http://127.0.0.1:${process.env.PORT ?? 3000}`;
const apiPrefixes = ["/api", "/auth-inv", "/chat-api", "/csv", "/config", "/trpc", "/healthz", "/readyz"];

export default defineConfig({
  root: "client",
  publicDir: "public",
  plugins: [
    // The router plugin must come before react(): it writes client/routeTree.gen.ts.
    tanstackRouter({
      target: "react",
      autoCodeSplitting: true,
      // Absolute: the plugin resolves relative paths against Vite's root (client/).
      routesDirectory: fileURLToPath(new URL("./client/routes", import.meta.url)),
      generatedRouteTree: fileURLToPath(new URL("./client/routeTree.gen.ts", import.meta.url)),
    }),
    react(),
    tailwindcss(),
  ],
  resolve: {
    alias: {
      "@shared": new URL("./shared", import.meta.url).pathname,
      "@client": new URL("./client", import.meta.url).pathname,
    },
  },
  build: { outDir: "../dist/client", emptyOutDir: true, sourcemap: false },
  // Dev: the API runs on PORT; the proxy keeps the browser's Host so the server's origin check passes.
  server: {
    port: 5173,
    proxy: Object.fromEntries(apiPrefixes.map((p) => [p, { target: apiTarget, changeOrigin: false }])),
  },
});
