import { useDebouncedValue } from "@client/lib/use-debounced-value.ts";
import { SETTINGS_SEARCH_DEBOUNCE_MS } from "@shared/settings.ts";
import { useState } from "react";

/**
 * The state both settings tables share: a search box debounced 300 ms, the page (a new search
 * starts at page 1) and the rows being edited, keyed by pid or vendor name.
 */
export function useSettingsList<K extends string | number, D>() {
  const [search, setSearch] = useState("");
  const debounced = useDebouncedValue(search.trim(), SETTINGS_SEARCH_DEBOUNCE_MS);
  const [paging, setPaging] = useState({ search: "", page: 1 });
  const page = paging.search === debounced ? paging.page : 1;
  const setPage = (next: number) => setPaging({ search: debounced, page: next });
  const [drafts, setDrafts] = useState<Partial<Record<K, D>>>({});
  const setDraft = (key: K, draft: D | undefined) =>
    setDrafts(({ [key]: _old, ...rest }) =>
      draft ? ({ ...rest, [key]: draft } as Partial<Record<K, D>>) : (rest as Partial<Record<K, D>>),
    );
  return { search, setSearch, debounced, page, setPage, drafts, setDraft };
}
