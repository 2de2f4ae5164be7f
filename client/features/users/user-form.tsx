// The add/edit user form (spec sections 2 "User Management screen", 4 "Users", 5 "User form"): it
// replaces the list, validates with the server's own field rules, and sends permissions as ids.
import { Alert, AlertDescription } from "@client/components/ui/alert.tsx";
import { Button } from "@client/components/ui/button.tsx";
import {
  Card,
  CardContent,
  CardDescription,
  CardFooter,
  CardHeader,
  CardTitle,
} from "@client/components/ui/card.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import {
  Select,
  SelectContent,
  SelectItem,
  SelectTrigger,
  SelectValue,
} from "@client/components/ui/select.tsx";
import { Separator } from "@client/components/ui/separator.tsx";
import { Switch } from "@client/components/ui/switch.tsx";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import { zodResolver } from "@hookform/resolvers/zod";
import { withRequiredPermissions } from "@shared/permissions.ts";
import { USER_MESSAGES, UserFieldsSchema } from "@shared/users.ts";
import { useMutation, useQuery } from "@tanstack/react-query";
import { TRPCClientError } from "@trpc/client";
import { ArrowLeftIcon, InfoIcon, Loader2Icon, TriangleAlertIcon } from "lucide-react";
import { type ReactNode, useEffect, useMemo } from "react";
import { Controller, useForm } from "react-hook-form";
import { z } from "zod";
import { saveErrorText, USERS_TEXT } from "./messages.ts";
import { type PermissionCategory, PermissionChecklist } from "./permission-checklist.tsx";
import type { AdminUserRow } from "./types.ts";

const NO_CHAT_USER = "none";

const FormSchema = UserFieldsSchema.extend({
  /** A chat user's id as text, or 'none'. */
  chat_user: z.string(),
  /** Permission codes. */
  permissions: z.array(z.string()),
});
const NewUserFormSchema = FormSchema.superRefine((v, ctx) => {
  if (!v.password)
    ctx.addIssue({ code: "custom", path: ["password"], message: USER_MESSAGES.passwordRequired });
});
type FormInput = z.input<typeof FormSchema>;
type FormOutput = z.output<typeof FormSchema>;

function defaultsOf(user: AdminUserRow | undefined): FormInput {
  return {
    username: user?.username ?? "",
    email: user?.email ?? "",
    password: "",
    is_admin: user?.is_admin ?? false,
    is_active: user?.is_active ?? true,
    chat_user: user?.rocket_chat_user_id != null ? String(user.rocket_chat_user_id) : NO_CHAT_USER,
    // A settings tab without the Settings page opens nothing: the form adds what the tabs need.
    permissions: withRequiredPermissions(user?.permissions ?? []),
  };
}

function Field({
  id,
  label,
  error,
  hint,
  children,
}: {
  id: string;
  label: string;
  error?: string;
  hint?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="space-y-2">
      <Label htmlFor={id}>{label}</Label>
      {children}
      {error ? (
        <p role="alert" className="text-xs text-destructive" data-testid={`${id}-error`}>
          {error}
        </p>
      ) : (
        hint && <p className="text-xs text-muted-foreground">{hint}</p>
      )}
    </div>
  );
}

function SwitchRow({
  id,
  label,
  description,
  checked,
  disabled,
  onChange,
}: {
  id: string;
  label: string;
  description: string;
  checked: boolean;
  disabled?: boolean;
  onChange: (checked: boolean) => void;
}) {
  return (
    <div className="flex items-start justify-between gap-4 rounded-lg border px-4 py-3">
      <div className="space-y-0.5">
        <Label htmlFor={id}>{label}</Label>
        <p className="text-xs text-muted-foreground">{description}</p>
      </div>
      <Switch id={id} checked={checked} disabled={disabled} onCheckedChange={onChange} />
    </div>
  );
}

/** A titled part of the form: title beside the fields on wide screens, or above them when `stacked`. */
function Section({
  title,
  description,
  stacked,
  children,
}: {
  title: string;
  description?: string;
  stacked?: boolean;
  children: ReactNode;
}) {
  return (
    <section className={cn("grid gap-4", !stacked && "lg:grid-cols-[12rem_1fr] lg:gap-8")}>
      <div className="space-y-1">
        <h3 className="text-sm font-medium">{title}</h3>
        {description && <p className="text-xs text-muted-foreground">{description}</p>}
      </div>
      <div className="min-w-0 space-y-4">{children}</div>
    </section>
  );
}

export interface UserFormProps {
  /** The user being edited; absent when adding. */
  user?: AdminUserRow;
  categories: PermissionCategory[];
  /** The signed-in user: they may not deactivate themselves; only admins grant admin. */
  me: { id: number; is_admin: boolean };
  onCancel: () => void;
  onSaved: (user: AdminUserRow, created: boolean) => void;
  /** A failed save: the text for the permission-error panel. */
  onError: (message: string) => void;
}

export function UserForm({ user, categories, me, onCancel, onSaved, onError }: UserFormProps) {
  const trpc = useTRPC();
  const isNew = !user;
  const isSelf = user?.id === me.id;
  const form = useForm<FormInput, unknown, FormOutput>({
    resolver: zodResolver(isNew ? NewUserFormSchema : FormSchema),
    defaultValues: defaultsOf(user),
  });
  const { register, control, handleSubmit, watch, formState, setError } = form;
  const isAdmin = watch("is_admin") ?? false;
  const permissions = watch("permissions");

  // A failure here is only logged (spec section 8 "Users").
  const chatUsers = useQuery({ ...trpc.chat.users.queryOptions(), retry: false });
  useEffect(() => {
    if (chatUsers.error) console.error("Failed to fetch chat users:", chatUsers.error);
  }, [chatUsers.error]);

  const idByCode = useMemo(
    () => new Map(categories.flatMap((c) => c.permissions.map((p) => [p.code, p.id] as const))),
    [categories],
  );

  const onMutationError = (error: unknown) => {
    const field =
      error instanceof TRPCClientError ? (error.data as { field?: string } | undefined)?.field : undefined;
    const text = saveErrorText(error);
    if (field === "username" || field === "email" || field === "password") {
      setError(field, { message: text.replace(`${field}: `, "") });
    } else if (
      error instanceof TRPCClientError &&
      (error.data as { code?: string } | undefined)?.code === "CONFLICT" &&
      /username/i.test(text)
    ) {
      setError("username", { message: text });
    }
    onError(text);
  };
  const create = useMutation(
    trpc.users.create.mutationOptions({ onSuccess: (u) => onSaved(u, true), onError: onMutationError }),
  );
  const update = useMutation(
    trpc.users.update.mutationOptions({ onSuccess: (u) => onSaved(u, false), onError: onMutationError }),
  );
  const saving = create.isPending || update.isPending;

  const onSubmit = handleSubmit((values) => {
    const body = {
      username: values.username,
      email: values.email ?? "",
      is_admin: values.is_admin,
      is_active: values.is_active,
      // Admins hold every permission; their list is cleared on save (spec section 4 "Users").
      permissions: values.is_admin
        ? []
        : values.permissions.map((code) => idByCode.get(code)).filter((id): id is number => id !== undefined),
      // Blank on edit keeps the current password.
      ...(values.password ? { password: values.password } : {}),
      // Sent only for a non-admin with a real chat user selected (spec section 5).
      ...(!values.is_admin && values.chat_user !== NO_CHAT_USER
        ? { rocket_chat_user_id: Number(values.chat_user) }
        : {}),
    };
    if (user) update.mutate({ ...body, id: user.id });
    else create.mutate(body);
  });

  return (
    <Card data-testid="user-form">
      <CardHeader className="border-b">
        <div className="flex items-center gap-3">
          <Button
            type="button"
            variant="ghost"
            size="icon-sm"
            aria-label="Back to the user list"
            onClick={onCancel}
          >
            <ArrowLeftIcon aria-hidden />
          </Button>
          <div className="space-y-1">
            <CardTitle className="text-lg">{isNew ? "Add New User" : "Edit User"}</CardTitle>
            <CardDescription>
              {isNew
                ? "Create an account and choose what it may open."
                : `Change ${user.username}'s account and access.`}
            </CardDescription>
          </div>
        </div>
      </CardHeader>
      <form noValidate onSubmit={onSubmit} className="contents">
        <CardContent className="space-y-8">
          <Section title="Account" description="Sign-in details. The username is not case-sensitive.">
            <div className="grid gap-4 md:grid-cols-2">
              <Field id="user-username" label="Username" error={formState.errors.username?.message}>
                <Input
                  id="user-username"
                  autoComplete="off"
                  autoCapitalize="none"
                  spellCheck={false}
                  aria-invalid={formState.errors.username ? true : undefined}
                  {...register("username")}
                />
              </Field>
              <Field id="user-email" label="Email" error={formState.errors.email?.message} hint="Optional">
                <Input
                  id="user-email"
                  type="email"
                  autoComplete="off"
                  aria-invalid={formState.errors.email ? true : undefined}
                  {...register("email")}
                />
              </Field>
              <Field
                id="user-password"
                label="Password"
                error={formState.errors.password?.message}
                hint={isNew ? "At least 6 characters" : "Leave blank to keep the current password"}
              >
                <Input
                  id="user-password"
                  type="password"
                  autoComplete="new-password"
                  placeholder={isNew ? "" : "••••••••"}
                  aria-invalid={formState.errors.password ? true : undefined}
                  {...register("password")}
                />
              </Field>
            </div>
          </Section>
          <Separator />
          <Section title="Status" description="Administrators see and may do everything.">
            <div className="grid gap-3 md:grid-cols-2">
              <Controller
                control={control}
                name="is_admin"
                render={({ field }) => (
                  <SwitchRow
                    id="user-is-admin"
                    label="Administrator"
                    description={
                      me.is_admin
                        ? "Full access to every page and setting"
                        : "Only administrators can change this"
                    }
                    checked={field.value ?? false}
                    disabled={!me.is_admin}
                    onChange={field.onChange}
                  />
                )}
              />
              <Controller
                control={control}
                name="is_active"
                render={({ field }) => (
                  <SwitchRow
                    id="user-is-active"
                    label="Active"
                    description={
                      isSelf ? "You cannot deactivate your own account" : "Inactive users cannot log in"
                    }
                    checked={field.value ?? true}
                    disabled={isSelf}
                    onChange={field.onChange}
                  />
                )}
              />
            </div>
          </Section>
          <Separator />
          <Section title="Chat" description="The chat archive account linked to this user.">
            {isAdmin ? (
              <Alert>
                <InfoIcon aria-hidden />
                <AlertDescription>{USERS_TEXT.adminChat}</AlertDescription>
              </Alert>
            ) : (
              <Controller
                control={control}
                name="chat_user"
                render={({ field }) => (
                  <Field id="user-chat-user" label="Chat User">
                    <Select value={field.value} onValueChange={field.onChange}>
                      <SelectTrigger id="user-chat-user" className="w-full md:w-80">
                        <SelectValue />
                      </SelectTrigger>
                      <SelectContent>
                        <SelectItem value={NO_CHAT_USER}>None</SelectItem>
                        {chatUsers.data?.map((c) => (
                          <SelectItem key={c.id} value={String(c.id)}>
                            {c.name ? `${c.name} (@${c.username})` : `@${c.username}`}
                            {!c.active && <span className="text-muted-foreground"> · inactive</span>}
                          </SelectItem>
                        ))}
                      </SelectContent>
                    </Select>
                  </Field>
                )}
              />
            )}
          </Section>
          <Separator />
          <Section title="Permissions" description="What this user may open and change." stacked>
            {isAdmin && (
              <Alert>
                <InfoIcon aria-hidden />
                <AlertDescription>{USERS_TEXT.adminPermissions}</AlertDescription>
              </Alert>
            )}
            {!isAdmin && permissions.length === 0 && categories.length > 0 && (
              <Alert variant="warning" data-testid="no-permissions-warning">
                <TriangleAlertIcon aria-hidden />
                <AlertDescription className="text-amber-800">
                  {USERS_TEXT.noPermissionsWarning}
                </AlertDescription>
              </Alert>
            )}
            <Controller
              control={control}
              name="permissions"
              render={({ field }) => (
                <PermissionChecklist
                  categories={categories}
                  value={field.value}
                  onChange={field.onChange}
                  isAdmin={isAdmin}
                  disabled={saving}
                />
              )}
            />
          </Section>
        </CardContent>
        <CardFooter className="justify-end gap-2 border-t">
          <Button type="button" variant="outline" onClick={onCancel} disabled={saving}>
            Cancel
          </Button>
          <Button type="submit" disabled={saving} data-testid="user-form-submit">
            {saving && <Loader2Icon aria-hidden className="animate-spin" />}
            {isNew ? "Create User" : "Update User"}
          </Button>
        </CardFooter>
      </form>
    </Card>
  );
}
