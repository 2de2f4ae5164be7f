import { useTRPCClient } from "@client/lib/trpc.ts";
import { type QueryClient, useQuery } from "@tanstack/react-query";

/** Spec section 7: the image list is cached under the key reusable-images, invalidated after each change. */
export const REUSABLE_IMAGES_KEY = ["reusable-images"] as const;

export function useReusableImagesQuery() {
  const client = useTRPCClient();
  return useQuery({ queryKey: REUSABLE_IMAGES_KEY, queryFn: () => client.images.list.query() });
}

export function invalidateReusableImages(queryClient: QueryClient) {
  return queryClient.invalidateQueries({ queryKey: REUSABLE_IMAGES_KEY });
}
