import { ChatPage } from "@client/features/chat/chat-page.tsx";
import { ChatSearchSchema } from "@client/features/chat/search.ts";
import { createFileRoute } from "@tanstack/react-router";
import { useCallback } from "react";

/** The Chat Archive. Room, message (permalink), date, thread and search live in the URL. */
export const Route = createFileRoute("/_app/chat")({
  staticData: { page: "chat" },
  validateSearch: ChatSearchSchema,
  component: function ChatRoute() {
    const search = Route.useSearch();
    const navigate = Route.useNavigate();
    const onSearchChange = useCallback(
      (next: typeof search, opts?: { replace?: boolean }) =>
        void navigate({ search: next, replace: opts?.replace }),
      [navigate],
    );
    return <ChatPage search={search} onSearchChange={onSearchChange} />;
  },
});
