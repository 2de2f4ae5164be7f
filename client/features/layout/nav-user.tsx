import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuLabel,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from "@client/components/ui/dropdown-menu.tsx";
import {
  SidebarMenu,
  SidebarMenuButton,
  SidebarMenuItem,
  useSidebar,
} from "@client/components/ui/sidebar.tsx";
import { auth } from "@client/lib/session.ts";
import type { CurrentUser } from "@shared/auth.ts";
import { ChevronsUpDownIcon, LogOutIcon } from "lucide-react";
import { UserAvatar } from "./user-avatar.tsx";

function UserSummary({ user }: { user: CurrentUser }) {
  return (
    <>
      <UserAvatar username={user.username} />
      <div className="grid flex-1 text-left text-sm leading-tight">
        <span className="truncate font-medium" data-testid="user-menu-username">
          {user.username}
        </span>
        {user.email && (
          <span className="truncate text-xs text-muted-foreground" data-testid="user-menu-email">
            {user.email}
          </span>
        )}
      </div>
    </>
  );
}

/** The user menu at the sidebar's foot; 'Log out' ends the session and the layout goes to /login. */
export function NavUser({ user }: { user: CurrentUser }) {
  const { isMobile } = useSidebar();
  return (
    <SidebarMenu>
      <SidebarMenuItem>
        <DropdownMenu>
          <DropdownMenuTrigger asChild>
            <SidebarMenuButton
              size="lg"
              data-testid="user-menu"
              className="data-[state=open]:bg-sidebar-accent data-[state=open]:text-sidebar-accent-foreground"
            >
              <UserSummary user={user} />
              <ChevronsUpDownIcon className="ml-auto size-4" />
            </SidebarMenuButton>
          </DropdownMenuTrigger>
          <DropdownMenuContent
            className="w-(--radix-dropdown-menu-trigger-width) min-w-56 rounded-lg"
            side={isMobile ? "bottom" : "right"}
            align="end"
            sideOffset={4}
          >
            <DropdownMenuLabel className="p-0 font-normal">
              <div className="flex items-center gap-2 px-1 py-1.5 text-left text-sm">
                <UserSummary user={user} />
              </div>
            </DropdownMenuLabel>
            <DropdownMenuSeparator />
            <DropdownMenuItem data-testid="user-menu-logout" onSelect={() => void auth.logout()}>
              <LogOutIcon />
              Log out
            </DropdownMenuItem>
          </DropdownMenuContent>
        </DropdownMenu>
      </SidebarMenuItem>
    </SidebarMenu>
  );
}
