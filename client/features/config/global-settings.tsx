// The Global Settings tab (spec sections 2 "Global settings screen", 5 "Global settings"): the ABC
// classification and default cards, checked with the same rules the server applies.
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import { LoadingIndicator } from "@client/components/ui/loading-indicator.tsx";
import {
  Select,
  SelectContent,
  SelectItem,
  SelectTrigger,
  SelectValue,
} from "@client/components/ui/select.tsx";
import { useTRPC } from "@client/lib/trpc.ts";
import {
  checkGlobalSettings,
  GLOBAL_SETTINGS,
  type GlobalSetting,
  type GlobalSettingDefinition,
  globalSettingRange,
  globalSettingValueSchema,
} from "@shared/settings.ts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { TRPCClientError } from "@trpc/client";
import { Loader2Icon, SaveIcon } from "lucide-react";
import { useEffect, useMemo, useState } from "react";
import { toast } from "sonner";
import { SETTINGS_TEXT } from "./messages.ts";
import { LoadError, TabHeader } from "./parts.tsx";

const CARDS = [
  {
    id: "abc",
    title: "ABC Classification Settings",
    description: "Configure how products are classified into A, B, and C categories",
  },
  { id: "default", title: "Default Settings", description: "Configure system-wide default values" },
] as const;

/** Browser-level limits of spec section 5 (thresholds step 0.01), bounded by each setting's range. */
function numberProps(def: GlobalSettingDefinition) {
  const range = globalSettingRange(def);
  const step =
    def.kind === "share" ||
    def.kind === "probability" ||
    def.key.includes("threshold") ||
    (def.kind === "number" && (range?.max ?? 2) <= 1)
      ? 0.01
      : def.kind === "number"
        ? 0.1
        : 1;
  return { min: range?.min ?? 0, ...(range ? { max: range.max } : {}), step };
}

function SettingField({
  def,
  value,
  error,
  disabled,
  onChange,
}: {
  def: GlobalSettingDefinition;
  value: string;
  error: string | undefined;
  disabled: boolean;
  onChange: (value: string) => void;
}) {
  const id = `setting-${def.key}`;
  const hintId = `${id}-hint`;
  return (
    <div className="space-y-2" data-testid={id}>
      <Label htmlFor={id}>{def.label}</Label>
      {def.kind === "choice" ? (
        <Select value={value} onValueChange={onChange} disabled={disabled}>
          <SelectTrigger
            id={id}
            className="w-full"
            aria-describedby={hintId}
            aria-invalid={error ? true : undefined}
          >
            <SelectValue />
          </SelectTrigger>
          <SelectContent>
            {def.options?.map((o) => (
              <SelectItem key={o.value} value={o.value}>
                {o.label}
              </SelectItem>
            ))}
          </SelectContent>
        </Select>
      ) : def.kind === "int_list" ? (
        <Input
          id={id}
          type="text"
          inputMode="numeric"
          value={value}
          disabled={disabled}
          aria-describedby={hintId}
          aria-invalid={error ? true : undefined}
          onChange={(e) => onChange(e.target.value)}
          className="tabular-nums"
        />
      ) : (
        <Input
          id={id}
          type="number"
          inputMode="decimal"
          {...numberProps(def)}
          value={value}
          disabled={disabled}
          aria-describedby={hintId}
          aria-invalid={error ? true : undefined}
          onChange={(e) => onChange(e.target.value)}
          className="tabular-nums"
        />
      )}
      {error ? (
        <p id={hintId} role="alert" className="text-xs text-destructive">
          {error}
        </p>
      ) : (
        <p id={hintId} className="text-xs leading-relaxed text-muted-foreground">
          {def.description}
        </p>
      )}
    </div>
  );
}

function toValues(list: GlobalSetting[]): Record<string, string> {
  return Object.fromEntries(list.map((s) => [s.setting_key, s.setting_value]));
}

export default function GlobalSettings() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const query = useQuery(trpc.config.global.queryOptions());
  const [values, setValues] = useState<Record<string, string> | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});

  useEffect(() => {
    if (query.error) toast.error(SETTINGS_TEXT.loadFailed("global"));
  }, [query.error]);
  useEffect(() => {
    if (query.data && values === null) setValues(toValues(query.data));
  }, [query.data, values]);

  const saved = useMemo(() => (query.data ? toValues(query.data) : {}), [query.data]);
  const dirty = values !== null && GLOBAL_SETTINGS.some((d) => values[d.key] !== saved[d.key]);

  const save = useMutation(
    trpc.config.updateGlobal.mutationOptions({
      onSuccess: (list) => {
        queryClient.setQueryData(trpc.config.global.queryKey(), list);
        setValues(toValues(list));
        setErrors({});
        toast.success(SETTINGS_TEXT.globalSaved);
        // Blank product and vendor fields inherit from here.
        void queryClient.invalidateQueries(trpc.config.products.pathFilter());
        void queryClient.invalidateQueries(trpc.config.vendors.pathFilter());
      },
      onError: (error) => {
        const field =
          error instanceof TRPCClientError
            ? (error.data as { field?: string } | undefined)?.field
            : undefined;
        if (field && GLOBAL_SETTINGS.some((d) => d.key === field)) {
          setErrors({ [field]: error.message.replace(`${field}: `, "") });
        }
        toast.error(SETTINGS_TEXT.globalSaveFailed(error));
      },
    }),
  );

  if (query.isPending || (query.data && values === null))
    return <LoadingIndicator message="Loading settings..." />;
  if (query.error || !values) {
    return <LoadError message={SETTINGS_TEXT.loadFailed("global")} onRetry={() => void query.refetch()} />;
  }

  const setValue = (def: GlobalSettingDefinition, value: string) => {
    setValues((prev) => ({ ...prev, [def.key]: value }));
    const parsed = globalSettingValueSchema(def).safeParse(value);
    setErrors((prev) => {
      const { [def.key]: _old, ...rest } = prev;
      return parsed.success ? rest : { ...rest, [def.key]: parsed.error.issues[0]?.message ?? "is invalid" };
    });
  };

  const onSave = () => {
    const checked = checkGlobalSettings(values);
    if (!checked.ok) {
      setErrors({ [checked.key]: checked.message });
      document.getElementById(`setting-${checked.key}`)?.focus();
      return;
    }
    save.mutate({
      settings: GLOBAL_SETTINGS.map((d) => ({
        setting_key: d.key,
        setting_value: values[d.key] ?? d.defaultValue,
      })),
    });
  };

  return (
    <div data-testid="global-settings" className="space-y-6">
      <TabHeader
        title="Global Settings"
        description="Forecasting parameters for every product, unless its vendor or the product itself sets its own."
      />
      {CARDS.map((card) => (
        <Card key={card.id} data-testid={`global-card-${card.id}`}>
          <CardHeader>
            <CardTitle className="text-base">{card.title}</CardTitle>
            <CardDescription>{card.description}</CardDescription>
          </CardHeader>
          <CardContent className="grid gap-x-6 gap-y-5 sm:grid-cols-2 xl:grid-cols-3">
            {GLOBAL_SETTINGS.filter((d) => d.card === card.id).map((def) => (
              <SettingField
                key={def.key}
                def={def}
                value={values[def.key] ?? ""}
                error={errors[def.key]}
                disabled={save.isPending}
                onChange={(v) => setValue(def, v)}
              />
            ))}
          </CardContent>
        </Card>
      ))}
      <div className="flex items-center justify-end gap-3">
        {dirty && <span className="text-sm text-muted-foreground">Unsaved changes</span>}
        <Button onClick={onSave} disabled={save.isPending} data-testid="save-global-settings">
          {save.isPending ? <Loader2Icon aria-hidden className="animate-spin" /> : <SaveIcon aria-hidden />}
          Save All Settings
        </Button>
      </div>
    </div>
  );
}
