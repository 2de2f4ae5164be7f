// @rocket.chat/message-parser ships its types under dist/, which its package.json "exports" does
// not expose: the one function used here, typed loosely (markdown.tsx walks the tree itself).
declare module "@rocket.chat/message-parser" {
  export function parse(
    input: string,
    options?: { emoticons?: boolean },
  ): { type: string; value?: unknown }[];
}
