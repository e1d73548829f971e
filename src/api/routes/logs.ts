/**
 * Admin log API (issue 19): list, search and export the searchable log index (src/logs/index/).
 * Admins see their tenant's entries; operators (admins of the default tenant) see every entry,
 * installation-wide (system) ones included; anyone else gets 403.
 *
 * Results are newest first (`sort: "oldest"` reverses), never ranked: operators read logs as a
 * timeline, and a keyset cursor over (timestamp, id) pages a timeline exactly, whichever instance
 * or database answers. Full text narrows the timeline. Exports are oldest first, like a log file.
 */
import { Readable } from 'node:stream';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Principal } from '../../auth/tokens.js';
import { BadRequestError } from '../../errors.js';
import { LogCategory, LogEntry } from '../../logs/entry.js';
import { EXPORT_FORMATS, EXPORT_MEDIA_TYPES, exportChunks, exportFilename } from '../../logs/index/export.js';
import { entryOfRow, findLogEntries } from '../../logs/index/queries.js';
import { decodeCursor, encodeCursor, ipPatternOf, levelOf, rangeOf, rankOf, textTermsOf, type LogQuery } from '../../logs/index/search.js';
import { requirePrincipal, requireRole } from '../auth.js';
import type { AppContext } from '../context.js';
import { errorResponseSchema } from '../errors.js';
import { isOperator } from './tenants.js';

const Limit = z.coerce.number().int().min(1).max(1000).default(100);

export const LogEntryView = LogEntry.extend({
  /** `process`: written by an instance; `event`: derived from a domain event by the logs projection. */
  source: z.enum(['process', 'event']),
});

export const LogPage = z.object({
  object: z.literal('list'),
  data: z.array(LogEntryView),
  has_more: z.boolean(),
  /** Pass as `cursor` for the next page; null on the last one. */
  next_cursor: z.string().nullable(),
}).meta({ id: 'LogPage' });

export const ListLogsQuery = z.object({
  level: z.string().max(20).optional().describe('This level and above: DEBUG, INFO, WARNING, ERROR, CRITICAL'),
  hours: z.coerce.number().positive().max(24 * 3650).optional().describe('Only entries of the last this many hours'),
  component: z.string().min(1).max(100).optional(),
  limit: Limit,
  cursor: z.string().max(500).optional(),
});

const DateRange = z.object({
  start: z.string().max(40).optional().describe('ISO-8601 date-time, or a date (its start)'),
  end: z.string().max(40).optional().describe('ISO-8601 date-time, or a date (its end, inclusive)'),
});

export const LogFilters = z.object({
  component: z.string().min(1).max(100).optional(),
  components: z.array(z.string().min(1).max(100)).max(50).optional(),
  level: z.string().max(20).optional().describe('This level and above'),
  levels: z.array(z.string().max(20)).max(5).optional().describe('Exactly these levels'),
  category: LogCategory.optional(),
  categories: z.array(LogCategory).max(5).optional(),
  date_range: DateRange.optional(),
  keywords: z.array(z.string().min(1).max(200)).max(20).optional().describe('Words every entry must contain (message or details), as the query'),
  user_id: z.string().min(1).max(64).optional(),
  request_id: z.string().min(1).max(128).optional().describe('The entries of one request (its X-Request-Id)'),
  ip_address: z.string().min(1).max(64).optional().describe('An address, or with * wildcards: 10.0.*, 2001:db8:*'),
});
type LogFilters = z.infer<typeof LogFilters>;

export const SearchLogsRequest = z.object({
  query: z.string().max(1000).optional().describe('Full text over message and details: every word must occur (a word ending in * is a prefix)'),
  filters: LogFilters.optional(),
  sort: z.enum(['newest', 'oldest']).default('newest'),
  limit: Limit,
  cursor: z.string().max(500).optional(),
});

export const ExportLogsRequest = z.object({
  date_range: z.object({ start: z.string().max(40), end: z.string().max(40) }),
  format: z.enum(EXPORT_FORMATS),
  query: z.string().max(1000).optional(),
  filters: LogFilters.omit({ date_range: true }).optional(),
});

/** What a principal may see: its tenant's entries, or all for operators. */
const scopeOf = (principal: Principal): string | null => (isOperator(principal) ? null : principal.tenantId);

/** The LogQuery of a request's filters and full text (400 with a code for what cannot be read). */
function queryOf(tenantId: string | null, text: string | undefined, filters: LogFilters | undefined): Omit<LogQuery, 'order' | 'limit'> {
  const f = filters ?? {};
  if (f.level !== undefined && f.levels !== undefined) throw new BadRequestError('give level (this level and above) or levels (exactly these), not both', 'invalid_level', 'filters.levels');
  const components = [...(f.component !== undefined ? [f.component] : []), ...(f.components ?? [])];
  const categories = [...(f.category !== undefined ? [f.category] : []), ...(f.categories ?? [])];
  const words = textTermsOf(text, f.keywords);
  return {
    tenantId,
    ...(f.level !== undefined && { minRank: rankOf(levelOf(f.level, 'filters.level')) }),
    ...(f.levels !== undefined && { levels: f.levels.map((l, i) => levelOf(l, `filters.levels.${i}`)) }),
    ...(components.length > 0 && { components }),
    ...(categories.length > 0 && { categories }),
    ...rangeOf(f.date_range, 'filters.date_range'),
    ...(f.user_id !== undefined && { userId: f.user_id }),
    ...(f.request_id !== undefined && { requestId: f.request_id }),
    ...(f.ip_address !== undefined && { ip: ipPatternOf(f.ip_address) }),
    ...(words.length > 0 && { words }),
  };
}

export function logRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const admin = requireRole(ctx.tokens, 'admin', ctx.config.auth.rbacEnabled);
    const tags = ['logs'];
    const db = ctx.sql.db;
    const errors = {
      400: errorResponseSchema('invalid_request, invalid_level, invalid_cursor, invalid_date_range, invalid_ip_pattern, query_too_long'),
      401: errorResponseSchema('unauthorized'),
      403: errorResponseSchema('forbidden (not an admin)'),
    };
    const page = async (query: LogQuery) => {
      const { rows, next } = await findLogEntries(db, query);
      return { object: 'list' as const, data: rows.map(entryOfRow) as z.infer<typeof LogEntryView>[], has_more: next !== null, next_cursor: next ? encodeCursor(next) : null };
    };

    app.get(
      '/api/admin/logs',
      {
        preHandler: admin,
        schema: {
          tags,
          summary: 'Recent log entries, newest first',
          description: 'Admins see their tenant\'s entries; operators see all, system entries included. `level` means that level and above. Pages: pass `next_cursor` as `cursor`.',
          querystring: ListLogsQuery,
          response: { 200: LogPage, ...errors },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const q = request.query;
        return page({
          tenantId: scopeOf(principal),
          ...(q.level !== undefined && { minRank: rankOf(levelOf(q.level, 'level')) }),
          ...(q.hours !== undefined && { since: new Date(Date.now() - q.hours * 3_600_000).toISOString() }),
          ...(q.component !== undefined && { components: [q.component] }),
          ...(q.cursor !== undefined && { after: decodeCursor(q.cursor) }),
          order: 'newest',
          limit: q.limit,
        });
      },
    );

    app.post(
      '/api/admin/logs/search',
      {
        preHandler: admin,
        schema: {
          tags,
          summary: 'Search log entries (full text and filters), newest first',
          description:
            'Results are in time order, newest first (`sort: "oldest"` for the other way), not ranked by relevance: `query` and `filters.keywords` narrow the timeline (every word must occur in the message or details; `word*` is a prefix). `level`: that level and above; `levels`: exactly those. `ip_address` takes `*` wildcards. Pages: pass `next_cursor` as `cursor` with the same body.',
          body: SearchLogsRequest,
          response: { 200: LogPage, ...errors },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const body = request.body;
        return page({
          ...queryOf(scopeOf(principal), body.query, body.filters),
          ...(body.cursor !== undefined && { after: decodeCursor(body.cursor) }),
          order: body.sort,
          limit: body.limit,
        });
      },
    );

    app.post(
      '/api/admin/logs/export',
      {
        preHandler: admin,
        schema: {
          tags,
          summary: 'Export log entries of a date range (streamed download)',
          description:
            'A download (Content-Disposition: attachment) streamed page by page, oldest first, in constant memory. `json`: one JSON array of entries; `csv`: RFC 4180 with a header row, cells that a spreadsheet would run as formulas prefixed with \'; `text`: `[<timestamp>] <LEVEL>: <message>` lines. Same filters as search.',
          body: ExportLogsRequest,
          response: { 200: z.string().describe('The file'), ...errors },
        },
      },
      async (request, reply) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const { date_range: range, format, query, filters } = request.body;
        const bounds = rangeOf(range);
        const since = bounds.since!;
        const until = bounds.until!;
        const logQuery = queryOf(scopeOf(principal), query, { ...filters, date_range: range });
        const body = Readable.from(exportChunks(db, logQuery, format), { objectMode: false, highWaterMark: 64 * 1024 });
        body.on('error', (error) => ctx.logger.warn({ err: error }, 'log export stopped'));
        return reply
          .type(EXPORT_MEDIA_TYPES[format])
          .header('content-disposition', `attachment; filename="${exportFilename(since, until, format)}"`)
          .header('cache-control', 'private, no-store')
          .header('x-content-type-options', 'nosniff')
          .send(body as never);
      },
    );
  };
}
