// The permission checklist of the user form (spec section 2 "User Management screen"): grouped by
// category, each with a Select All / Deselect All toggle; for admins everything shows checked and
// cannot be changed. A permission that others need (the Settings page for any settings tab) is
// ticked with them and says why.
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Checkbox } from "@client/components/ui/checkbox.tsx";
import { REQUIRED_WITH, withRequiredPermissions } from "@shared/permissions.ts";
import { USERS_TEXT } from "./messages.ts";
import type { RouterOutputs } from "./types.ts";

export type PermissionCategory = RouterOutputs["users"]["permissionCategories"][number];

export function PermissionChecklist({
  categories,
  value,
  onChange,
  isAdmin,
  disabled,
}: {
  categories: PermissionCategory[];
  /** Selected permission codes. */
  value: readonly string[];
  onChange: (codes: string[]) => void;
  isAdmin: boolean;
  disabled?: boolean;
}) {
  if (categories.length === 0) {
    return <p className="text-sm text-muted-foreground">{USERS_TEXT.noPermissionsAvailable}</p>;
  }
  const selected = new Set(value);
  const locked = isAdmin || disabled;
  const change = (next: Set<string>) => onChange(withRequiredPermissions([...next]));
  /** Why a permission cannot be unticked now: other chosen permissions need it. */
  const neededBy = (code: string): string | null => {
    const by = REQUIRED_WITH[code as keyof typeof REQUIRED_WITH];
    return !isAdmin && by?.some((c) => selected.has(c)) ? "needed to open the tabs you chose" : null;
  };

  return (
    <div className="space-y-4" data-testid="permission-checklist">
      {categories.map((category) => {
        const codes = category.permissions.map((p) => p.code);
        const count = isAdmin ? codes.length : codes.filter((c) => selected.has(c)).length;
        const all = count === codes.length;
        const toggleAll = () => {
          const next = new Set(selected);
          for (const code of codes) {
            if (all) next.delete(code);
            else next.add(code);
          }
          change(next);
        };
        return (
          <fieldset
            key={category.category}
            className="overflow-hidden rounded-lg border"
            data-testid={`permission-category-${category.category}`}
          >
            <legend className="sr-only">{category.category}</legend>
            <div className="flex items-center justify-between gap-3 border-b bg-muted/40 px-4 py-2">
              <div className="flex items-center gap-2">
                <span className="text-sm font-medium">{category.category}</span>
                <Badge variant="outline" className="tabular-nums text-muted-foreground">
                  {count} / {codes.length}
                </Badge>
              </div>
              <Button type="button" variant="ghost" size="sm" disabled={locked} onClick={toggleAll}>
                {all ? "Deselect All" : "Select All"}
              </Button>
            </div>
            <div className="grid gap-x-6 gap-y-3 p-4 sm:grid-cols-2 xl:grid-cols-3">
              {category.permissions.map((permission) => {
                const id = `permission-${permission.code}`;
                const needed = neededBy(permission.code);
                return (
                  <div key={permission.code} className="flex items-start gap-3">
                    <Checkbox
                      id={id}
                      className="mt-0.5"
                      checked={isAdmin || selected.has(permission.code)}
                      disabled={locked || needed !== null}
                      data-code={permission.code}
                      aria-describedby={needed ? `${id}-needed` : undefined}
                      onCheckedChange={(checked) => {
                        const next = new Set(selected);
                        if (checked === true) next.add(permission.code);
                        else next.delete(permission.code);
                        change(next);
                      }}
                    />
                    <label htmlFor={id} className="grid gap-0.5 text-sm leading-snug">
                      <span className="font-medium">{permission.name}</span>
                      {permission.description && (
                        <span className="text-xs text-muted-foreground">{permission.description}</span>
                      )}
                      {needed && (
                        <span
                          id={`${id}-needed`}
                          className="text-xs text-amber-700"
                          data-testid={`permission-needed-${permission.code}`}
                        >
                          Ticked: {needed}
                        </span>
                      )}
                    </label>
                  </div>
                );
              })}
            </div>
          </fieldset>
        );
      })}
    </div>
  );
}
