import { PageHeader } from "@client/components/page-header.tsx";
import { LoadingIndicator } from "@client/components/ui/loading-indicator.tsx";
import {
  Select,
  SelectContent,
  SelectGroup,
  SelectItem,
  SelectLabel,
  SelectTrigger,
  SelectValue,
} from "@client/components/ui/select.tsx";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "@client/components/ui/tabs.tsx";
import { canAccess } from "@client/features/auth/access.ts";
import { AccessDenied } from "@client/features/auth/access-denied.tsx";
import { useAuth } from "@client/lib/session.ts";
import { useIsMobile } from "@client/lib/use-mobile.ts";
import type { CurrentUser } from "@shared/auth.ts";
import { Suspense, useId } from "react";
import type { SettingsTabId } from "./search.ts";
import { SETTINGS_SECTIONS, SETTINGS_TABS, type SettingsSection } from "./tabs.ts";

export const NO_SETTINGS_MESSAGE =
  "You don't have permission to access any settings. Please contact an administrator for assistance.";

/** The sections this user sees: each with only its permitted tabs, and only if one is left. */
function permittedSections(user: CurrentUser): SettingsSection[] {
  return SETTINGS_SECTIONS.map((section) => ({
    name: section.name,
    tabs: section.tabs.filter((tab) => canAccess(user, tab.permission)),
  })).filter((section) => section.tabs.length > 0);
}

function SectionTabList({ section }: { section: SettingsSection }) {
  const headingId = useId();
  return (
    <div data-testid={`settings-section-${section.name}`} className="space-y-1">
      <h2 id={headingId} className="px-3 text-xs font-medium text-muted-foreground">
        {section.name}
      </h2>
      <TabsList aria-labelledby={headingId}>
        {section.tabs.map(({ id, title, icon: Icon }) => (
          <TabsTrigger key={id} value={id} data-testid={`settings-tab-${id}`}>
            <Icon aria-hidden />
            {title}
          </TabsTrigger>
        ))}
      </TabsList>
    </div>
  );
}

/**
 * Phones (under 768 px): the tabs as one compact selector, grouped by section, so the open tab's
 * content starts right under it instead of below the eight-tab list.
 */
function CompactTabSelect({
  sections,
  value,
  onChange,
}: {
  sections: SettingsSection[];
  value: SettingsTabId;
  onChange: (tab: SettingsTabId) => void;
}) {
  return (
    <div>
      <Select value={value} onValueChange={(v) => onChange(v as SettingsTabId)}>
        <SelectTrigger className="w-full" aria-label="Settings tab" data-testid="compact-settings-tabs">
          <SelectValue />
        </SelectTrigger>
        <SelectContent>
          {sections.map((section) => (
            <SelectGroup key={section.name}>
              <SelectLabel>{section.name}</SelectLabel>
              {section.tabs.map(({ id, title }) => (
                <SelectItem key={id} value={id} data-testid={`settings-option-${id}`}>
                  {title}
                </SelectItem>
              ))}
            </SelectGroup>
          ))}
        </SelectContent>
      </Select>
    </div>
  );
}

export interface SettingsPageProps {
  /** The `?tab=` parameter; absent means the first tab the user may open. */
  tab: SettingsTabId | undefined;
  onTabChange: (tab: SettingsTabId) => void;
}

/** The Settings page of spec section 2: a vertical tab list in three sections beside the open tab. */
export function SettingsPage({ tab, onTabChange }: SettingsPageProps) {
  const { user } = useAuth();
  const isMobile = useIsMobile();
  if (!user) return null;

  const sections = permittedSections(user);
  const firstTab = sections[0]?.tabs[0];
  const active = firstTab && (SETTINGS_TABS.find((t) => t.id === tab) ?? firstTab);

  return (
    <div className="space-y-6">
      <PageHeader title="Settings" description="Forecasting parameters, content, users and data." />
      {!active ? (
        <AccessDenied message={NO_SETTINGS_MESSAGE} />
      ) : (
        <Tabs
          orientation="vertical"
          value={active.id}
          onValueChange={(value) => onTabChange(value as SettingsTabId)}
          className="flex-col gap-4 md:flex-row md:items-start md:gap-6"
        >
          {isMobile && <CompactTabSelect sections={sections} value={active.id} onChange={onTabChange} />}
          <nav
            aria-label="Settings"
            data-testid="settings-nav"
            className="hidden shrink-0 space-y-5 md:sticky md:top-20 md:block md:w-60"
          >
            {sections.map((section) => (
              <SectionTabList key={section.name} section={section} />
            ))}
          </nav>
          <TabsContent value={active.id} className="min-w-0" data-testid={`settings-panel-${active.id}`}>
            {canAccess(user, active.permission) ? (
              <Suspense fallback={<LoadingIndicator />}>
                <active.component />
              </Suspense>
            ) : (
              <AccessDenied message={`You don't have permission to access ${active.title}.`} />
            )}
          </TabsContent>
        </Tabs>
      )}
    </div>
  );
}
