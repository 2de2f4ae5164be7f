import {
  Sidebar,
  SidebarContent,
  SidebarFooter,
  SidebarGroup,
  SidebarGroupLabel,
  SidebarHeader,
  SidebarMenu,
  SidebarMenuButton,
  SidebarMenuItem,
  useSidebar,
} from "@client/components/ui/sidebar.tsx";
import { canAccess } from "@client/features/auth/access.ts";
import type { CurrentUser } from "@shared/auth.ts";
import { pagePermission } from "@shared/permissions.ts";
import { Link, useLocation } from "@tanstack/react-router";
import { Logo, PRODUCT_NAME } from "./logo.tsx";
import { NavUser } from "./nav-user.tsx";
import { isActivePath, NAV_GROUPS, PAGES } from "./pages.ts";

/** The groups and items this user may see; a group with none of its items is left out. */
function visibleGroups(user: CurrentUser) {
  return NAV_GROUPS.map((group) => ({
    name: group.name,
    items: group.items.filter((item) =>
      canAccess(user, pagePermission(item.page), { adminOnly: item.adminOnly }),
    ),
  })).filter((group) => group.items.length > 0);
}

export function AppSidebar({ user }: { user: CurrentUser }) {
  const pathname = useLocation({ select: (location) => location.pathname });
  const { isMobile, setOpenMobile } = useSidebar();
  const closeSheet = () => {
    if (isMobile) setOpenMobile(false);
  };

  return (
    <Sidebar>
      <SidebarHeader className="h-14 justify-center border-b border-sidebar-border">
        <SidebarMenu>
          <SidebarMenuItem>
            <SidebarMenuButton size="lg" asChild tooltip={PRODUCT_NAME} className="h-10">
              <Link to="/" onClick={closeSheet} data-testid="sidebar-brand">
                <Logo className="size-8!" />
                <div className="grid flex-1 text-left leading-tight">
                  <span className="truncate text-sm font-semibold">{PRODUCT_NAME}</span>
                  <span className="truncate text-xs text-muted-foreground">Inventory management</span>
                </div>
              </Link>
            </SidebarMenuButton>
          </SidebarMenuItem>
        </SidebarMenu>
      </SidebarHeader>
      <SidebarContent className="py-1">
        {visibleGroups(user).map((group) => (
          <SidebarGroup key={group.name} data-testid={`sidebar-group-${group.name}`}>
            <SidebarGroupLabel>{group.name}</SidebarGroupLabel>
            <SidebarMenu>
              {group.items.map(({ page }) => {
                const { title, path, icon: Icon } = PAGES[page];
                const active = isActivePath(pathname, path);
                return (
                  <SidebarMenuItem key={page}>
                    <SidebarMenuButton asChild isActive={active} tooltip={title}>
                      <Link
                        to={path}
                        onClick={closeSheet}
                        data-testid={`sidebar-item-${page}`}
                        aria-current={active ? "page" : undefined}
                      >
                        <Icon />
                        <span>{title}</span>
                      </Link>
                    </SidebarMenuButton>
                  </SidebarMenuItem>
                );
              })}
            </SidebarMenu>
          </SidebarGroup>
        ))}
      </SidebarContent>
      <SidebarFooter>
        <NavUser user={user} />
      </SidebarFooter>
    </Sidebar>
  );
}
