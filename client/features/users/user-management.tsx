// The User Management tab (spec sections 2 "User Management screen", 4 "Users", 8 "Users"): the
// user table, the add/edit form that replaces it, the delete confirmation and the error panel.
import { Alert, AlertDescription, AlertTitle } from "@client/components/ui/alert.tsx";
import { ConfirmDialog } from "@client/components/ui/alert-dialog.tsx";
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import {
  Card,
  CardAction,
  CardContent,
  CardDescription,
  CardHeader,
  CardTitle,
} from "@client/components/ui/card.tsx";
import { LoadingIndicator } from "@client/components/ui/loading-indicator.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { TableEmptyRow } from "@client/components/ui/table-helpers.tsx";
import { Tooltip, TooltipContent, TooltipProvider, TooltipTrigger } from "@client/components/ui/tooltip.tsx";
import { getToken } from "@client/lib/auth-storage.ts";
import { errorStatus } from "@client/lib/errors.ts";
import { auth, useAuth } from "@client/lib/session.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { formatRelativeAge } from "@shared/format.ts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { AlertCircleIcon, PencilIcon, PlusIcon, RefreshCwIcon, Trash2Icon } from "lucide-react";
import { type ReactNode, useCallback, useEffect, useState } from "react";
import { toast } from "sonner";
import { deleteErrorText, listErrorText, loadUserErrorText, USERS_TEXT } from "./messages.ts";
import type { AdminUserRow } from "./types.ts";
import { UserForm } from "./user-form.tsx";

type Mode = { kind: "list" } | { kind: "add" } | { kind: "edit"; id: number };

const COLUMNS = 6;

function PermissionErrorPanel({ message, onRetry }: { message: string; onRetry: () => void }) {
  return (
    <Alert variant="destructive" data-testid="permission-error">
      <AlertCircleIcon aria-hidden />
      <AlertTitle>Permission Error</AlertTitle>
      <AlertDescription>
        <p data-testid="permission-error-message">{message}</p>
        <Button variant="outline" size="sm" className="mt-1" onClick={onRetry}>
          <RefreshCwIcon aria-hidden />
          Retry
        </Button>
      </AlertDescription>
    </Alert>
  );
}

/** An icon button with a tooltip; a disabled one explains why in the tooltip. */
function RowButton({
  label,
  reason,
  onClick,
  children,
  destructive,
}: {
  label: string;
  reason?: string;
  onClick: () => void;
  children: ReactNode;
  destructive?: boolean;
}) {
  return (
    <Tooltip>
      <TooltipTrigger asChild>
        {/* A span keeps the tooltip working while the button is disabled. */}
        <span className="inline-flex">
          <Button
            variant="ghost"
            size="icon-sm"
            aria-label={label}
            disabled={reason !== undefined}
            onClick={onClick}
            className={
              destructive
                ? "text-muted-foreground hover:bg-destructive/10 hover:text-destructive"
                : "text-muted-foreground"
            }
          >
            {children}
          </Button>
        </span>
      </TooltipTrigger>
      <TooltipContent>{reason ?? label}</TooltipContent>
    </Tooltip>
  );
}

function LastLogin({ date }: { date: Date | null }) {
  if (!date) return <span className="text-muted-foreground">Never</span>;
  return (
    <time dateTime={date.toISOString()} title={date.toLocaleString()} className="tabular-nums">
      {formatRelativeAge(date)}
    </time>
  );
}

function UserTable({
  users,
  loading,
  me,
  onEdit,
  onDelete,
}: {
  users: AdminUserRow[];
  loading: boolean;
  me: { id: number; is_admin: boolean };
  onEdit: (user: AdminUserRow) => void;
  onDelete: (user: AdminUserRow) => void;
}) {
  return (
    <Table
      stackOnPhone
      className="[&_td:first-child]:pl-6 [&_td:last-child]:pr-6 [&_th:first-child]:pl-6 [&_th:last-child]:pr-6"
    >
      <TableHeader>
        <TableRow className="hover:bg-transparent">
          <TableHead>Username</TableHead>
          <TableHead>Email</TableHead>
          <TableHead>Admin</TableHead>
          <TableHead>Status</TableHead>
          <TableHead>Last Login</TableHead>
          <TableHead className="text-right">Actions</TableHead>
        </TableRow>
      </TableHeader>
      <TableBody>
        {users.length === 0 ? (
          loading ? (
            <TableRow className="hover:bg-transparent">
              <TableCell colSpan={COLUMNS}>
                <LoadingIndicator message="Loading user data..." />
              </TableCell>
            </TableRow>
          ) : (
            <TableEmptyRow colSpan={COLUMNS} message="No users found" />
          )
        ) : (
          users.map((u) => {
            const adminOnly =
              !me.is_admin && u.is_admin ? "Only administrators can change administrators" : undefined;
            return (
              <TableRow key={u.id} data-testid="user-row" data-username={u.username}>
                <TableCell data-primary className="font-medium">
                  {u.username}
                  {u.id === me.id && (
                    <span className="ml-2 text-xs font-normal text-muted-foreground">(you)</span>
                  )}
                </TableCell>
                <TableCell data-label="Email" className={u.email ? undefined : "text-muted-foreground"}>
                  {u.email || "-"}
                </TableCell>
                <TableCell data-label="Admin">
                  {u.is_admin ? (
                    <Badge>Admin</Badge>
                  ) : (
                    <Badge variant="outline" className="text-muted-foreground">
                      No
                    </Badge>
                  )}
                </TableCell>
                <TableCell data-label="Status">
                  {u.is_active ? (
                    <Badge variant="success">Active</Badge>
                  ) : (
                    <Badge variant="secondary" className="text-muted-foreground">
                      Inactive
                    </Badge>
                  )}
                </TableCell>
                <TableCell data-label="Last Login">
                  <LastLogin date={u.last_login} />
                </TableCell>
                <TableCell data-actions>
                  <div className="flex justify-end gap-1">
                    <RowButton label={`Edit ${u.username}`} reason={adminOnly} onClick={() => onEdit(u)}>
                      <PencilIcon aria-hidden />
                    </RowButton>
                    <RowButton
                      label={`Delete ${u.username}`}
                      reason={u.id === me.id ? "You cannot delete your own account" : adminOnly}
                      onClick={() => onDelete(u)}
                      destructive
                    >
                      <Trash2Icon aria-hidden />
                    </RowButton>
                  </div>
                </TableCell>
              </TableRow>
            );
          })
        )}
      </TableBody>
    </Table>
  );
}

/** Loads the user to edit (spec: GET {auth}/users/{id}), then shows the form. */
function EditUser({
  id,
  onFailed,
  children,
}: {
  id: number;
  onFailed: (message: string) => void;
  children: (user: AdminUserRow) => ReactNode;
}) {
  const trpc = useTRPC();
  const query = useQuery({ ...trpc.users.get.queryOptions({ id }), staleTime: 0, gcTime: 0 });
  useEffect(() => {
    if (query.error) onFailed(loadUserErrorText(query.error));
  }, [query.error, onFailed]);
  if (query.data) return children(query.data);
  return (
    <Card>
      <CardContent>
        <LoadingIndicator message="Loading user data..." />
      </CardContent>
    </Card>
  );
}

export default function UserManagement() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { user: me } = useAuth();
  const hasToken = getToken() !== null;
  const [mode, setMode] = useState<Mode>({ kind: "list" });
  const [panelError, setPanelError] = useState<string | null>(null);
  // The user to delete stays set while the dialog animates out.
  const [deleting, setDeleting] = useState<AdminUserRow | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);

  const users = useQuery({ ...trpc.users.list.queryOptions(), enabled: hasToken });
  const categories = useQuery({ ...trpc.users.permissionCategories.queryOptions(), enabled: hasToken });

  // Spec section 8: a 401 also refreshes the current user (which ends a session that is gone).
  useEffect(() => {
    if (errorStatus(users.error) === 401 || errorStatus(categories.error) === 401)
      void auth.fetchCurrentUser();
  }, [users.error, categories.error]);

  const loadError = !hasToken
    ? USERS_TEXT.noToken
    : users.error
      ? listErrorText(users.error, "users")
      : categories.error
        ? listErrorText(categories.error, "permissions")
        : null;
  const error = panelError ?? loadError;

  const retry = () => {
    setPanelError(null);
    void users.refetch();
    void categories.refetch();
  };
  const backToList = () => setMode({ kind: "list" });
  const onEditFailed = useCallback((message: string) => {
    setPanelError(message);
    setMode({ kind: "list" });
  }, []);

  const remove = useMutation(
    trpc.users.delete.mutationOptions({
      onSuccess: () => {
        toast.success("User deleted successfully");
        return queryClient.invalidateQueries(trpc.users.list.pathFilter());
      },
      onError: (err) => setPanelError(deleteErrorText(err)),
    }),
  );

  if (!me) return null;

  const onSaved = async (saved: AdminUserRow, created: boolean) => {
    setPanelError(null);
    toast.success(created ? "User created successfully" : "User updated successfully");
    setMode({ kind: "list" });
    await queryClient.invalidateQueries(trpc.users.list.pathFilter());
    // Changing one's own account changes what the app shows.
    if (saved.id === me.id) void auth.fetchCurrentUser();
  };

  const form = (user?: AdminUserRow) => (
    <UserForm
      key={user?.id ?? "new"}
      user={user}
      categories={categories.data ?? []}
      me={me}
      onCancel={backToList}
      onSaved={onSaved}
      onError={setPanelError}
    />
  );

  return (
    <TooltipProvider>
      <div data-testid="user-management" className="space-y-4">
        {error && <PermissionErrorPanel message={error} onRetry={retry} />}
        {mode.kind === "add" ? (
          form()
        ) : mode.kind === "edit" ? (
          <EditUser id={mode.id} onFailed={onEditFailed}>
            {(user) => form(user)}
          </EditUser>
        ) : (
          <Card className="gap-4">
            <CardHeader>
              <CardTitle className="text-lg">User Management</CardTitle>
              <CardDescription>Accounts, what each may open, and their chat link.</CardDescription>
              <CardAction>
                <Button
                  onClick={() => {
                    setPanelError(null);
                    setMode({ kind: "add" });
                  }}
                  disabled={!categories.data}
                >
                  <PlusIcon aria-hidden />
                  Add User
                </Button>
              </CardAction>
            </CardHeader>
            <CardContent className="px-0">
              <UserTable
                users={users.data ?? []}
                loading={hasToken && users.isPending}
                me={me}
                onEdit={(u) => {
                  setPanelError(null);
                  setMode({ kind: "edit", id: u.id });
                }}
                onDelete={(u) => {
                  setDeleting(u);
                  setConfirmDelete(true);
                }}
              />
            </CardContent>
          </Card>
        )}
        <ConfirmDialog
          open={confirmDelete}
          onOpenChange={setConfirmDelete}
          title={USERS_TEXT.deleteQuestion}
          description={
            <>
              <span className="font-medium text-foreground">{deleting?.username}</span> will be removed and
              signed out. This action cannot be undone.
            </>
          }
          confirmLabel="Delete"
          cancelLabel="Cancel"
          variant="destructive"
          onConfirm={() => deleting && remove.mutate({ id: deleting.id })}
        />
      </div>
    </TooltipProvider>
  );
}
