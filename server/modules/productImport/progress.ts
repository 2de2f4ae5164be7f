// How far a long step of an import has got (today the submit), for the page's progress bar. Kept
// in this process's memory: the server that runs the step answers for it; a step's entry goes a
// minute after it ends.
import type { ImportProgress } from "../../../shared/product-import.ts";

const running = new Map<number, ImportProgress & { timer?: NodeJS.Timeout }>();

export function setProgress(importId: number, progress: Omit<ImportProgress, "at">): void {
  const prev = running.get(importId);
  if (prev?.timer) clearTimeout(prev.timer);
  running.set(importId, { ...progress, at: new Date() });
}

/** The step ended (done or failed): its last state stays readable for a minute. */
export function endProgress(importId: number, progress: Omit<ImportProgress, "at">): void {
  setProgress(importId, progress);
  const entry = running.get(importId)!;
  entry.timer = setTimeout(() => {
    if (running.get(importId) === entry) running.delete(importId);
  }, 60_000);
  entry.timer.unref();
}

export function getProgress(importId: number): ImportProgress | null {
  const p = running.get(importId);
  if (!p) return null;
  const { timer: _timer, ...rest } = p;
  return rest;
}
