// Spec section 8 "Session": a failed lazy-module preload raises a 'preload-error' event and is
// rethrown unless a listener handled it (called preventDefault()).
export const PRELOAD_ERROR_EVENT = "preload-error";

export type PreloadErrorEvent = CustomEvent<{ error: unknown }>;

export function installPreloadErrorHandler(target: Window = window): void {
  target.addEventListener("vite:preloadError", (event) => {
    const forwarded = new CustomEvent(PRELOAD_ERROR_EVENT, {
      detail: { error: event.payload },
      cancelable: true,
    });
    const handled = !target.dispatchEvent(forwarded);
    // Vite rethrows the import error unless its own event is cancelled.
    if (handled) event.preventDefault();
  });
}
