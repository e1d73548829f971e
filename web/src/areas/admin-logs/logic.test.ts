import { describe, expect, it } from 'vitest';
import { emptyLogForm, exportBody, formOf, isoOf, localOf, searchBody } from './logic';

describe('log filter form', () => {
  it('is the latest entries when blank', () => {
    expect(searchBody(emptyLogForm())).toEqual({ sort: 'newest', limit: 50 });
  });

  it('puts every filled field where the search API wants it', () => {
    const form = { ...emptyLogForm(), query: ' login failed ', level: 'WARNING', category: 'security', component: 'auth', user_id: 'u1', request_id: 'req-1', ip_address: '10.0.*', start: '2026-11-01T10:00', sort: 'oldest' as const };
    expect(searchBody(form, 20, 'CUR')).toEqual({
      query: 'login failed',
      filters: { level: 'WARNING', category: 'security', component: 'auth', user_id: 'u1', request_id: 'req-1', ip_address: '10.0.*', date_range: { start: new Date('2026-11-01T10:00').toISOString() } },
      sort: 'oldest',
      limit: 20,
      cursor: 'CUR',
    });
  });

  it('reads a search body back into the same form', () => {
    const form = { ...emptyLogForm(), query: 'boom', level: 'ERROR', user_id: 'u2', start: '2026-11-01T10:00', end: '2026-11-02T09:30' };
    expect(formOf(searchBody(form))).toEqual(form);
    expect(formOf(searchBody(emptyLogForm()))).toEqual(emptyLogForm());
  });

  it('converts datetime-local values and ignores unreadable ones', () => {
    expect(isoOf('')).toBeUndefined();
    expect(isoOf('not a date')).toBeUndefined();
    expect(localOf(isoOf('2026-03-04T05:06'))).toBe('2026-03-04T05:06');
  });

  it('gives the export a date range: the last day when open, and the same filters', () => {
    const now = new Date('2026-11-28T12:00:00.000Z');
    expect(exportBody({ ...emptyLogForm(), level: 'ERROR', query: 'x' }, 'csv', now)).toEqual({
      date_range: { start: '2026-11-27T12:00:00.000Z', end: '2026-11-28T12:00:00.000Z' },
      format: 'csv',
      query: 'x',
      filters: { level: 'ERROR' },
    });
    const start = new Date('2026-11-01T00:00').toISOString();
    expect(exportBody({ ...emptyLogForm(), start: '2026-11-01T00:00' }, 'text', now)).toEqual({ date_range: { start, end: now.toISOString() }, format: 'text' });
  });
});
