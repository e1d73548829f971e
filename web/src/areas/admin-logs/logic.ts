/** The log filter form <-> the search API's body (POST /api/admin/logs/search) and the export's. */

export const LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
export const CATEGORIES = ['system', 'application', 'user_activity', 'security', 'performance'] as const;
export const EXPORT_FORMATS = ['csv', 'json', 'text'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface LogForm {
  query: string;
  /** This level and above ('' = any). */
  level: string;
  category: string;
  component: string;
  user_id: string;
  request_id: string;
  ip_address: string;
  /** datetime-local values (the browser's time zone), '' = open. */
  start: string;
  end: string;
  sort: 'newest' | 'oldest';
}

export const emptyLogForm = (): LogForm => ({ query: '', level: '', category: '', component: '', user_id: '', request_id: '', ip_address: '', start: '', end: '', sort: 'newest' });

export interface LogFilters {
  level?: string;
  category?: string;
  component?: string;
  user_id?: string;
  request_id?: string;
  ip_address?: string;
  date_range?: { start?: string; end?: string };
}

export interface SearchBody {
  query?: string;
  filters?: LogFilters;
  sort: 'newest' | 'oldest';
  limit: number;
  cursor?: string;
}

/** A datetime-local value as an ISO instant ('' or unreadable: undefined). */
export function isoOf(local: string): string | undefined {
  if (!local.trim()) return undefined;
  const t = new Date(local);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

/** An ISO instant as a datetime-local value (minutes) in the browser's time zone. */
export function localOf(iso: string | undefined): string {
  if (!iso) return '';
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}T${pad(t.getHours())}:${pad(t.getMinutes())}`;
}

function filtersOf(form: LogForm): LogFilters | undefined {
  const f: LogFilters = {};
  const text = (key: 'level' | 'category' | 'component' | 'user_id' | 'request_id' | 'ip_address') => {
    const v = form[key].trim();
    if (v) f[key] = v;
  };
  for (const key of ['level', 'category', 'component', 'user_id', 'request_id', 'ip_address'] as const) text(key);
  const start = isoOf(form.start);
  const end = isoOf(form.end);
  if (start || end) f.date_range = { ...(start && { start }), ...(end && { end }) };
  return Object.keys(f).length > 0 ? f : undefined;
}

/** The search body of the form (blank fields left out); `cursor` for the next page. */
export function searchBody(form: LogForm, limit = 50, cursor?: string): SearchBody {
  const query = form.query.trim();
  const filters = filtersOf(form);
  return { ...(query && { query }), ...(filters && { filters }), sort: form.sort, limit, ...(cursor && { cursor }) };
}

/** The form a search body was made from (the round trip of searchBody, for a saved search). */
export function formOf(body: SearchBody): LogForm {
  const f = body.filters ?? {};
  return {
    ...emptyLogForm(),
    query: body.query ?? '',
    level: f.level ?? '',
    category: f.category ?? '',
    component: f.component ?? '',
    user_id: f.user_id ?? '',
    request_id: f.request_id ?? '',
    ip_address: f.ip_address ?? '',
    start: localOf(f.date_range?.start),
    end: localOf(f.date_range?.end),
    sort: body.sort,
  };
}

/**
 * The export body: the same filters, and the date range the API requires — the form's, an open
 * start being a day before the end, an open end being now.
 */
export function exportBody(form: LogForm, format: ExportFormat, now = new Date()) {
  const { date_range: range, ...filters } = filtersOf(form) ?? {};
  const end = range?.end ?? now.toISOString();
  const start = range?.start ?? new Date(new Date(end).getTime() - 24 * 3600_000).toISOString();
  const query = form.query.trim();
  return { date_range: { start, end }, format, ...(query && { query }), ...(Object.keys(filters).length > 0 && { filters }) };
}
