// The "Devices" panel of /small, for users who manage users: named device links (a token shown
// once, its last use, revoke). It reads the REST routes with the signed-in session; for anyone
// else GET /api/small/devices answers 401/403 and the button does not show.
import { Button } from "@client/components/ui/button.tsx";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogHeader,
  DialogTitle,
  DialogTrigger,
} from "@client/components/ui/dialog.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import { getToken } from "@client/lib/auth-storage.ts";
import type { CreatedDevice, SmallDevice } from "@shared/dashboard.ts";
import { useCallback, useEffect, useState } from "react";
import { formatMoment } from "./format.ts";

async function call<T>(
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; data: T | null; message?: string }> {
  const token = getToken();
  const res = await fetch(url, {
    method,
    credentials: "same-origin",
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { "content-type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (res.status === 204) return { status: 204, data: null };
  const json = (await res.json().catch(() => null)) as (T & { message?: string }) | null;
  return { status: res.status, data: res.ok ? json : null, message: json?.message };
}

export function DevicesPanel() {
  const [devices, setDevices] = useState<SmallDevice[] | null>(null);
  const [created, setCreated] = useState<CreatedDevice | null>(null);
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    const res = await call<SmallDevice[]>("GET", "/api/small/devices").catch(() => null);
    setDevices(res?.status === 200 ? res.data : null);
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  if (!devices) return null;

  const create = async (e: React.FormEvent) => {
    e.preventDefault();
    setError(null);
    const res = await call<CreatedDevice>("POST", "/api/small/devices", { name });
    if (res.status !== 201 || !res.data) {
      setError(res.message ?? "Could not create the device link.");
      return;
    }
    setCreated(res.data);
    setName("");
    await refresh();
  };
  const revoke = async (device: SmallDevice) => {
    await call("DELETE", `/api/small/devices/${device.id}`);
    if (created?.id === device.id) setCreated(null);
    await refresh();
  };

  return (
    <Dialog onOpenChange={(open) => !open && setCreated(null)}>
      <DialogTrigger asChild>
        <Button variant="outline" size="sm" data-testid="devices-button">
          Devices
        </Button>
      </DialogTrigger>
      <DialogContent className="max-h-[90svh] overflow-y-auto sm:max-w-lg">
        <DialogHeader>
          <DialogTitle>Device links</DialogTitle>
          <DialogDescription>
            A device link opens this compact dashboard on a phone or a wall screen without signing in, and
            nothing else. Revoking it ends its access at once.
          </DialogDescription>
        </DialogHeader>
        <form onSubmit={create} className="flex items-end gap-2">
          <div className="flex-1 space-y-1">
            <Label htmlFor="device-name">Name</Label>
            <Input
              id="device-name"
              value={name}
              maxLength={80}
              placeholder="e.g. Warehouse phone"
              onChange={(e) => setName(e.target.value)}
            />
          </div>
          <Button type="submit" disabled={!name.trim()}>
            Create link
          </Button>
        </form>
        {error && (
          <p role="alert" className="text-sm text-red-600">
            {error}
          </p>
        )}
        {created && (
          <div
            className="space-y-1 rounded-lg border border-emerald-300 bg-emerald-50 p-3 text-sm dark:bg-emerald-950"
            data-testid="device-created"
          >
            <p className="font-medium">Link for "{created.name}" (shown only now: copy it):</p>
            <Input
              readOnly
              value={`${window.location.origin}${created.link}`}
              data-testid="device-link"
              onFocus={(e) => e.currentTarget.select()}
            />
          </div>
        )}
        <ul className="divide-y rounded-lg border" data-testid="device-list">
          {devices.length === 0 && (
            <li className="p-3 text-sm text-muted-foreground">No device links yet.</li>
          )}
          {devices.map((d) => (
            <li key={d.id} className="flex items-center gap-2 p-3 text-sm" data-testid="device-row">
              <div className="min-w-0 flex-1">
                <div className="truncate font-medium">{d.name}</div>
                <div className="text-xs text-muted-foreground">
                  Created {formatMoment(d.created_at)}
                  {d.created_by ? ` by ${d.created_by}` : ""} · last used{" "}
                  {d.last_used_at ? formatMoment(d.last_used_at) : "never"}
                </div>
              </div>
              <Button variant="outline" size="sm" onClick={() => void revoke(d)}>
                Revoke
              </Button>
            </li>
          ))}
        </ul>
      </DialogContent>
    </Dialog>
  );
}
