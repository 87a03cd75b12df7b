// Titles some conversations take from their parent's, which capture keeps in step with it
// (`lib/capture/batch_transaction.ts`): Claude Code's helper copies, a compaction's and a side
// question's, which repeat their session and whose own first prompt is the helper's instruction
// ("Your task is to create a detailed summary…") or nothing a reader would call a title.

import { cutTitle } from "../store/text.ts";

/** A Claude Code helper copy's conversation key: its session, and which helper made it. */
const HELPER_COPY = /^claude:([^/]+)\/agent-(acompact|aside_question)-/;

/** What each helper's copy is called, before its session's title. */
const LABELS: Record<string, string> = {
  acompact: "Compaction of",
  aside_question: "Side question in",
};

/** True for a conversation whose title is its parent's (see `titleFromParent`). */
export function titledByParent(key: string): boolean {
  return HELPER_COPY.test(key);
}

/**
 * The title of the conversation `key` when it is titled by its parent (`Compaction of <the
 * session's title>`, `Side question in …`), from the parent's title, or, for a parent the store
 * does not hold or that has none yet, its short id (`claude:9fca650e`, which `show` finds);
 * null for any other conversation.
 */
export function titleFromParent(key: string, parentTitle: string | null): string | null {
  const match = HELPER_COPY.exec(key);
  if (!match) return null;
  const [, session, helper] = match;
  const parent = parentTitle?.trim() || `claude:${session!.slice(0, 8)}`;
  return cutTitle(`${LABELS[helper!]} ${parent}`);
}
