/**
 * Conversation search, the pure part: terms from a query, LIKE patterns, snippets around the
 * first match, and the ranking. The read side (src/queries/conversations.ts) finds the matches
 * with LIKE over lower-cased columns scoped to one user: no full-text index, whose segments would
 * keep a deleted conversation's words (decision 0120).
 */

export const SEARCH_LIMITS = { terms: 8, termChars: 100, snippetChars: 160, snippetsPerConversation: 3 } as const;

/** Lower-cased, whitespace-separated terms, each at most once; every one must occur. */
export function searchTerms(q: string): string[] {
  const terms = q
    .toLowerCase()
    .split(/\s+/)
    .filter((t) => t.length > 0)
    .map((t) => t.slice(0, SEARCH_LIMITS.termChars));
  return [...new Set(terms)].slice(0, SEARCH_LIMITS.terms);
}

/** A LIKE pattern matching `term` anywhere, with `!` as the escape character (the same in every SQL dialect). */
export function containsPattern(term: string): string {
  return `%${term.replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

export interface Snippet {
  /** The text around the match, with an ellipsis where it was cut. */
  text: string;
  /** [start, end) of each term's first match within `text`. */
  highlights: Array<[number, number]>;
}

/** The part of `text` around the first match of the terms (null: none matches). */
export function snippetOf(text: string, terms: readonly string[], width: number = SEARCH_LIMITS.snippetChars): Snippet | null {
  const lower = text.toLowerCase();
  // Lower-casing may change a text's length (rare letters): then positions are searched in the lower-cased text itself.
  const source = lower.length === text.length ? text : lower;
  const first = Math.min(...terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0));
  if (!Number.isFinite(first)) return null;
  const start = Math.max(0, first - Math.floor(width / 3));
  const end = Math.min(source.length, start + width);
  const prefix = start > 0 ? '…' : '';
  const body = source.slice(start, end).replace(/\s+/g, ' ');
  const shown = `${prefix}${body}${end < source.length ? '…' : ''}`;
  const shownLower = shown.toLowerCase();
  const highlights: Array<[number, number]> = [];
  for (const term of terms) {
    const at = shownLower.indexOf(term);
    if (at >= 0) highlights.push([at, at + term.length]);
  }
  highlights.sort((a, b) => a[0] - b[0]);
  return { text: shown, highlights };
}

/** Rank of a conversation: a title match weighs most, then how many messages match. */
export function searchScore(titleMatches: boolean, matchingMessages: number): number {
  return (titleMatches ? 20 : 0) + Math.min(matchingMessages, 10);
}
