// Rocket.Chat markdown (bold, italics, strike, code, quotes, lists, links, mentions, emoji short
// codes) rendered from Rocket.Chat's own parser's syntax tree into React elements. Nothing is ever
// inserted as HTML: text in a message, tags included, stays text. Links are kept only for http(s)
// and mailto addresses and open in a new tab with rel="noopener noreferrer"; others show as text.

import * as messageParser from "@rocket.chat/message-parser";
import { get as emojiOf } from "node-emoji";
import { Fragment, memo, type ReactNode } from "react";

type Node = { type: string; value?: unknown; [k: string]: unknown };
type Parse = (input: string, options?: { emoticons?: boolean }) => Node[];
// The package is CommonJS: bundlers expose parse by name, Node under default.
const parse: Parse =
  (messageParser as unknown as { parse?: Parse }).parse ??
  (messageParser as unknown as { default: { parse: Parse } }).default.parse;

/** Whether a link may be followed: http(s) and mailto only. */
export function safeHref(src: string): string | null {
  const s = src.trim();
  if (/^https?:\/\//i.test(s)) return s;
  if (/^mailto:[^\s]+$/i.test(s)) return s;
  if (/^www\./i.test(s)) return `https://${s}`;
  return null;
}

/** ":smile:" → 😄; unknown short codes stay as typed. */
export function emoji(shortCode: string): string {
  const code = shortCode.replace(/^:|:$/g, "");
  const aliases: Record<string, string> = { thumbsup: "+1", thumbsdown: "-1" };
  return emojiOf(code) ?? emojiOf(aliases[code] ?? "") ?? `:${code}:`;
}

function inline(node: Node, key: number, mention: (u: string) => boolean): ReactNode {
  const v = node.value as unknown;
  const children = (list: unknown) =>
    (Array.isArray(list) ? list : [list]).map((n, i) => inline(n as Node, i, mention));
  switch (node.type) {
    case "PLAIN_TEXT":
      return <Fragment key={key}>{String(v ?? "")}</Fragment>;
    case "BOLD":
      return <strong key={key}>{children(v)}</strong>;
    case "ITALIC":
      return <em key={key}>{children(v)}</em>;
    case "STRIKE":
      return <s key={key}>{children(v)}</s>;
    case "INLINE_CODE":
      return (
        <code key={key} className="rounded bg-muted px-1 py-0.5 font-mono text-[0.85em]">
          {String((v as Node)?.value ?? "")}
        </code>
      );
    case "LINK": {
      const { src, label } = v as { src: Node; label: unknown };
      const href = safeHref(String(src?.value ?? ""));
      const content = children(label);
      if (!href)
        return (
          <span key={key} data-unsafe-link="">
            {content}
          </span>
        );
      return (
        <a
          key={key}
          href={href}
          target="_blank"
          rel="noopener noreferrer"
          className="text-primary underline underline-offset-2 break-all"
        >
          {content}
        </a>
      );
    }
    case "IMAGE": {
      // Remote images are not loaded (they could track readers): the link only.
      const { src } = v as { src: Node };
      const href = safeHref(String(src?.value ?? ""));
      return href ? (
        <a key={key} href={href} target="_blank" rel="noopener noreferrer" className="text-primary underline">
          {href}
        </a>
      ) : null;
    }
    case "MENTION_USER": {
      const name = String((v as Node)?.value ?? "");
      return (
        <span
          key={key}
          className={
            mention(name)
              ? "rounded bg-amber-100 px-1 font-medium text-amber-900 dark:bg-amber-900/40 dark:text-amber-100"
              : "rounded bg-primary/10 px-1 font-medium text-primary"
          }
        >
          @{name}
        </span>
      );
    }
    case "MENTION_CHANNEL":
      return (
        <span key={key} className="font-medium text-primary">
          #{String((v as Node)?.value ?? "")}
        </span>
      );
    case "EMOJI": {
      const code = (node.shortCode as string | undefined) ?? "";
      const unicode = node.unicode as string | undefined;
      return (
        <span key={key} title={code ? `:${code}:` : undefined}>
          {unicode ?? emoji(code)}
        </span>
      );
    }
    case "TIMESTAMP":
      return <Fragment key={key}>{String((node.fallback as Node | undefined)?.value ?? "")}</Fragment>;
    default:
      return <Fragment key={key}>{typeof v === "string" ? v : ""}</Fragment>;
  }
}

function paragraph(p: { value?: unknown }, key: number, mention: (u: string) => boolean) {
  return (
    <p key={key} className="whitespace-pre-wrap break-words">
      {(p.value as Node[]).map((n, i) => inline(n, i, mention))}
    </p>
  );
}

function block(node: Node, key: number, mention: (u: string) => boolean): ReactNode {
  switch (node.type) {
    case "PARAGRAPH":
      return paragraph(node, key, mention);
    case "QUOTE":
    case "BLOCKQUOTE":
      return (
        <blockquote key={key} className="border-l-2 border-muted-foreground/30 pl-3 text-muted-foreground">
          {(node.value as Node[]).map((n, i) => block(n, i, mention))}
        </blockquote>
      );
    case "CODE":
      return (
        <pre key={key} className="overflow-x-auto rounded-md bg-muted p-2 font-mono text-xs">
          {(node.value as Node[]).map((l) => String((l.value as Node)?.value ?? "")).join("\n")}
        </pre>
      );
    case "HEADING":
      return (
        <p key={key} className="font-semibold">
          {(node.value as Node[]).map((n, i) => inline(n, i, mention))}
        </p>
      );
    case "UNORDERED_LIST":
    case "ORDERED_LIST": {
      const Tag = node.type === "ORDERED_LIST" ? "ol" : "ul";
      return (
        <Tag key={key} className={node.type === "ORDERED_LIST" ? "list-decimal pl-5" : "list-disc pl-5"}>
          {(node.value as Node[]).map((item, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a parsed message never reorders
            <li key={i}>{(item.value as Node[]).map((n, j) => inline(n, j, mention))}</li>
          ))}
        </Tag>
      );
    }
    case "TASKS":
      return (
        <ul key={key} className="pl-1">
          {(node.value as Node[]).map((task, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a parsed message never reorders
            <li key={i}>
              {task.status ? "☑" : "☐"} {(task.value as Node[]).map((n, j) => inline(n, j, mention))}
            </li>
          ))}
        </ul>
      );
    case "LINE_BREAK":
      return <br key={key} />;
    case "BIG_EMOJI":
      return (
        <p key={key} className="text-3xl leading-tight">
          {(node.value as Node[]).map((n, i) => inline(n, i, mention))}
        </p>
      );
    case "KATEX":
      return (
        <pre key={key} className="font-mono text-xs">
          {String(node.value ?? "")}
        </pre>
      );
    default:
      return null;
  }
}

/** A message's text, rendered; on a parser failure the text as it is. */
export const MessageText = memo(function MessageText({
  text,
  me,
}: {
  text: string;
  /** The reader's chat username: mentions of them stand out. */
  me?: string | null;
}) {
  if (!text) return null;
  let ast: Node[];
  try {
    ast = parse(text, { emoticons: false });
  } catch {
    return <p className="whitespace-pre-wrap break-words">{text}</p>;
  }
  const mention = (u: string) => Boolean(me) && (u === me || u === "all" || u === "here");
  return (
    <div className="space-y-1" data-testid="message-text">
      {ast.map((n, i) => block(n, i, mention))}
    </div>
  );
});
