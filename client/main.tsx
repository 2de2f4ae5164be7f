import "./styles.css";
import { QueryClientProvider } from "@tanstack/react-query";
import { RouterProvider } from "@tanstack/react-router";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { Toaster } from "./components/ui/sonner.tsx";
import { installPreloadErrorHandler } from "./lib/preload-error.ts";
import { auth, queryClient, trpc, trpcClient } from "./lib/session.ts";
import { TRPCProvider } from "./lib/trpc.ts";
import { createAppRouter } from "./router.tsx";

installPreloadErrorHandler();

const router = createAppRouter({ trpc, queryClient, auth });

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");

createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        <RouterProvider router={router} />
        <Toaster />
      </TRPCProvider>
    </QueryClientProvider>
  </StrictMode>,
);
