/**
 * Preset search and listing over the `presets` read model, visibility-aware (see
 * visiblePresets in src/queries/presets.ts).
 *
 * Matching: the query is split on white space into terms (lower-cased; at most 10). A preset
 * matches when EVERY term occurs in its name, description, tags, system prompt or context
 * (substring, case-insensitive) — checked in SQL with `LIKE` on the lower-cased `search_text`.
 *
 * Ranking: each term scores by the best field it occurs in —
 *   name equals the term 60, a word of the name starts with it 50, name contains it 40,
 *   a tag equals it 30, a tag contains it 20, description 10, context / system prompt 3 —
 * summed over terms, plus 100 when the whole query equals the name and 30 when a query of several
 * terms occurs as such in the name. Ties: name, then id. Without `q`, presets are listed by name.
 *
 * Pagination: `limit` (1..100, default 20) and `offset`; answers carry `total` and `next_offset`
 * (null on the last page). Ranking happens over at most SEARCH_CANDIDATES matching presets.
 */
import { sql, type SqlBool } from 'kysely';
import type { PresetsTable } from '../adapters/sql/schema.js';
import { visiblePresets, type PresetReader } from '../queries/presets.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';

export const SEARCH_WEIGHTS = {
  nameEqualsQuery: 100,
  namePhrase: 30,
  nameEquals: 60,
  nameWordStart: 50,
  nameContains: 40,
  tagEquals: 30,
  tagContains: 20,
  description: 10,
  context: 3,
} as const;

export const SEARCH_CANDIDATES = 5_000;
export const MAX_TERMS = 10;

export type PresetScope = 'all' | 'mine' | 'builtin' | 'shared';

export interface PresetQuery {
  q?: string;
  /** Case-insensitive: `business` finds both `Business` and `business`. */
  category?: string;
  /** Every one of these tags (case-insensitive, exact). */
  tags?: string[];
  lang?: string;
  scope?: PresetScope;
  /** Only this owner's presets. */
  ownerId?: string;
  limit: number;
  offset: number;
}

export interface SearchResult {
  rows: Array<{ row: PresetsTable; score: number | null }>;
  total: number;
}

export function termsOf(q: string | undefined): string[] {
  if (!q) return [];
  return [...new Set(q.toLowerCase().split(/\s+/).filter(Boolean))].slice(0, MAX_TERMS);
}

/** LIKE pattern for "contains", escaped with `!` (an escape character every dialect takes as is). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

const likeEscaped = (column: 'search_text' | 'tags_text', pattern: string) => sql<SqlBool>`${sql.ref(column)} like ${pattern} escape '!'`;

function startsWord(haystack: string, term: string): boolean {
  for (let i = haystack.indexOf(term); i !== -1; i = haystack.indexOf(term, i + 1)) {
    if (i === 0 || !/[\p{L}\p{N}]/u.test(haystack[i - 1]!)) return true;
  }
  return false;
}

/** The score of one preset for the query's terms (see the module comment). Fields lower-cased. */
export function scorePreset(fields: { name: string; description: string; tags: readonly string[] }, terms: readonly string[]): number {
  const w = SEARCH_WEIGHTS;
  const { name, description, tags } = fields;
  let score = 0;
  for (const term of terms) {
    if (name === term) score += w.nameEquals;
    else if (startsWord(name, term)) score += w.nameWordStart;
    else if (name.includes(term)) score += w.nameContains;
    else if (tags.includes(term)) score += w.tagEquals;
    else if (tags.some((t) => t.includes(term))) score += w.tagContains;
    else if (description.includes(term)) score += w.description;
    else score += w.context; // SQL matched it in search_text: it is in the context or system prompt
  }
  const phrase = terms.join(' ');
  if (terms.length > 0 && name === phrase) score += w.nameEqualsQuery;
  else if (terms.length > 1 && name.includes(phrase)) score += w.namePhrase;
  return score;
}

function filtered(db: ReadModelDb, reader: PresetReader, query: PresetQuery, terms: readonly string[]) {
  let q = visiblePresets(db, reader);
  if (query.category) q = q.where(sql<string>`lower(${sql.ref('category')})`, '=', query.category.toLowerCase());
  if (query.lang) q = q.where('lang', '=', query.lang);
  if (query.ownerId !== undefined) q = q.where('owner_id', '=', query.ownerId).where('builtin', '=', 0);
  switch (query.scope ?? 'all') {
    case 'mine':
      q = q.where('builtin', '=', 0).where('owner_id', '=', reader.userId);
      break;
    case 'builtin':
      q = q.where('builtin', '=', 1);
      break;
    case 'shared':
      q = q.where('builtin', '=', 0).where('owner_id', '<>', reader.userId);
      break;
    case 'all':
      break;
  }
  for (const tag of query.tags ?? []) q = q.where(likeEscaped('tags_text', containsPattern(`\n${tag.toLowerCase()}\n`)));
  for (const term of terms) q = q.where(likeEscaped('search_text', containsPattern(term)));
  return q;
}

export async function searchPresets(db: ReadModelDb, reader: PresetReader, query: PresetQuery): Promise<SearchResult> {
  const terms = termsOf(query.q);
  const base = filtered(db, reader, query, terms);
  const counted = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirst();
  const total = Number(counted?.n ?? 0);

  if (terms.length === 0) {
    const rows = await base.selectAll().orderBy('name').orderBy('id').limit(query.limit).offset(query.offset).execute();
    return { rows: rows.map((row) => ({ row, score: null })), total };
  }

  // Rank the matching presets on their short fields, then read only the page's rows in full.
  const candidates = await base.select(['id', 'name', 'description', 'tags_text']).limit(SEARCH_CANDIDATES).execute();
  const ranked = candidates
    .map((c) => ({
      id: c.id,
      name: c.name,
      score: scorePreset({ name: c.name.toLowerCase(), description: c.description.toLowerCase(), tags: c.tags_text.split('\n').filter(Boolean) }, terms),
    }))
    .sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const page = ranked.slice(query.offset, query.offset + query.limit);
  if (page.length === 0) return { rows: [], total };
  const full = await db
    .selectFrom('presets')
    .selectAll()
    .where(
      'id',
      'in',
      page.map((p) => p.id),
    )
    .execute();
  const byId = new Map(full.map((r) => [r.id, r]));
  return { rows: page.flatMap((p) => (byId.has(p.id) ? [{ row: byId.get(p.id)!, score: p.score }] : [])), total: Math.min(total, SEARCH_CANDIDATES) };
}

/**
 * The caller's own presets changed after log position `since` (tombstones included, except on a
 * first sync), oldest change first.
 */
export async function presetChanges(db: ReadModelDb, reader: PresetReader, since: number, limit: number): Promise<PresetsTable[]> {
  let q = db.selectFrom('presets').selectAll().where('tenant_id', '=', reader.tenantId).where('owner_id', '=', reader.userId).where('builtin', '=', 0).where('position', '>', since);
  if (since === 0) q = q.where('deleted', '=', 0);
  return q.orderBy('position').orderBy('id').limit(limit).execute();
}
