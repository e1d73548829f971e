/**
 * Admin logs: filters and full-text search (cursor pages, "load more"), export as CSV / JSON /
 * text, and each entry's fields in a side drawer.
 */
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, send } from '../../api/client';
import { common } from '../../i18n/common';
import { useFormat, useT } from '../../i18n/context';
import { download, ErrorNote, Field, Page, TableState } from '../../ui/kit';
import { useAction } from '../../ui/use-api';
import '../admin-billing/ops.css';
import { CATEGORIES, emptyLogForm, EXPORT_FORMATS, exportBody, LEVELS, searchBody, type ExportFormat, type LogForm } from './logic';
import { messages } from './messages';

interface LogEntry {
  id: string;
  timestamp: string;
  level: (typeof LEVELS)[number];
  category: (typeof CATEGORIES)[number];
  component: string;
  event: string;
  user_id?: string;
  tenant_id?: string;
  request_id?: string;
  ip_address?: string;
  message: string;
  details: Record<string, unknown>;
  instance?: string;
  source: string;
}
interface LogPage {
  data: LogEntry[];
  has_more: boolean;
  next_cursor: string | null;
}

const PAGE = 50;

function Drawer({ entry, onClose }: { entry: LogEntry | null; onClose: () => void }) {
  const t = useT(messages);
  const c = useT(common);
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (entry && !d.open) d.showModal();
    if (!entry && d.open) d.close();
  }, [entry]);
  const fields = entry ? (Object.entries(entry).filter(([k]) => k !== 'details') as Array<[string, string]>) : [];
  return (
    <dialog ref={ref} className="drawer" aria-label={t('entry')} onClose={onClose}>
      <header className="modal-head">
        <h2>{t('entry')}</h2>
        <button type="button" className="icon" aria-label={c('close')} onClick={onClose}>
          ×
        </button>
      </header>
      {entry ? (
        <>
          <dl>
            {fields.map(([k, v]) => (
              <div key={k} style={{ display: 'contents' }}>
                <dt>{k}</dt>
                <dd>{String(v)}</dd>
              </div>
            ))}
          </dl>
          <h3>{t('json')}</h3>
          <pre aria-label={t('json')}>{JSON.stringify(entry, null, 2)}</pre>
        </>
      ) : null}
    </dialog>
  );
}

export default function Area() {
  const t = useT(messages);
  const { dateTime } = useFormat();
  const [form, setForm] = useState<LogForm>(emptyLogForm);
  const [searched, setSearched] = useState<LogForm>(emptyLogForm);
  const [entries, setEntries] = useState<LogEntry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [open, setOpen] = useState<LogEntry | null>(null);
  const [format, setFormat] = useState<ExportFormat>('csv');

  const search = useAction(async (f: LogForm, after?: string) => {
    const page = await api<LogPage>('/api/admin/logs/search', { method: 'POST', body: searchBody(f, PAGE, after) });
    setEntries((prev) => (after ? [...(prev ?? []), ...page.data] : page.data));
    setCursor(page.has_more ? page.next_cursor : null);
    setSearched(f);
  });
  // The latest entries on opening (run changes every render: keep the first one only).
  const opened = useRef(false);
  useEffect(() => {
    if (opened.current) return;
    opened.current = true;
    void search.run(emptyLogForm());
  }, [search]);

  const exporter = useAction(async () => download(await send('/api/admin/logs/export', { method: 'POST', body: exportBody(searched, format) }), `logs.${format === 'text' ? 'log' : format}`));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void search.run(form);
  };
  const set = (change: Partial<LogForm>) => setForm({ ...form, ...change });
  const text = (key: 'query' | 'component' | 'user_id' | 'request_id' | 'ip_address', label: string, hint?: string) => (
    <Field label={label} hint={hint}>
      {(id) => <input id={id} type={key === 'query' ? 'search' : 'text'} value={form[key]} onChange={(e) => set({ [key]: e.target.value })} />}
    </Field>
  );

  return (
    <Page title={t('title')}>
      <form className="card ops-section" role="search" aria-label={t('filters')} onSubmit={submit}>
        {text('query', t('query'), t('queryHint'))}
        <div className="form-row">
          <Field label={t('level')}>
            {(id) => (
              <select id={id} value={form.level} onChange={(e) => set({ level: e.target.value })}>
                <option value="">{t('anyLevel')}</option>
                {LEVELS.map((l) => (
                  <option key={l} value={l}>
                    {t('levelAndAbove', { level: l })}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label={t('category')}>
            {(id) => (
              <select id={id} value={form.category} onChange={(e) => set({ category: e.target.value })}>
                <option value="">{t('anyCategory')}</option>
                {CATEGORIES.map((c) => (
                  <option key={c} value={c}>
                    {t(c)}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {text('component', t('component'))}
          {text('user_id', t('userId'))}
          {text('request_id', t('requestId'))}
          {text('ip_address', t('ip'))}
          <Field label={t('start')}>{(id) => <input id={id} type="datetime-local" value={form.start} onChange={(e) => set({ start: e.target.value })} />}</Field>
          <Field label={t('end')}>{(id) => <input id={id} type="datetime-local" value={form.end} onChange={(e) => set({ end: e.target.value })} />}</Field>
          <Field label={t('sort')}>
            {(id) => (
              <select id={id} value={form.sort} onChange={(e) => set({ sort: e.target.value as LogForm['sort'] })}>
                <option value="newest">{t('newest')}</option>
                <option value="oldest">{t('oldest')}</option>
              </select>
            )}
          </Field>
        </div>
        <div className="form-actions">
          <button type="submit" disabled={search.busy}>
            {t('search')}
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setForm(emptyLogForm());
              void search.run(emptyLogForm());
            }}
          >
            {t('reset')}
          </button>
          <span className="spacer" />
          <label className="row">
            <span>{t('format')}</span>
            <select aria-label={t('format')} value={format} onChange={(e) => setFormat(e.target.value as ExportFormat)}>
              {EXPORT_FORMATS.map((f) => (
                <option key={f} value={f}>
                  {f.toUpperCase()}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="secondary" disabled={exporter.busy} onClick={() => void exporter.run()}>
            {t('export')}
          </button>
        </div>
        <small className="muted">{t('exportHint')}</small>
      </form>
      <ErrorNote error={search.error ?? exporter.error} />
      <TableState
        rows={entries}
        loading={search.busy}
        empty={t('noEntries')}
        table={(rows) => (
          <table aria-label={t('title')}>
            <thead>
              <tr>
                <th>{t('time')}</th>
                <th>{t('level')}</th>
                <th>{t('category')}</th>
                <th>{t('event')}</th>
                <th>{t('message')}</th>
                <th>{t('details')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={e.id}>
                  <td className="nowrap">{dateTime(e.timestamp)}</td>
                  <td className={`level-${e.level}`}>{e.level}</td>
                  <td className="nowrap">{t(e.category)}</td>
                  <td className="nowrap">
                    <code>{e.component}</code> {e.event}
                  </td>
                  <td className="log-message">{e.message}</td>
                  <td>
                    <button type="button" className="secondary" aria-label={t('detailsOf', { time: e.timestamp })} onClick={() => setOpen(e)}>
                      {t('details')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        footer={(rows) => (
          <div className="form-actions">
            <span className="muted">{t('shown', { n: rows.length })}</span>
            {cursor ? (
              <button type="button" className="secondary" disabled={search.busy} onClick={() => void search.run(searched, cursor)}>
                {t('loadMore')}
              </button>
            ) : null}
          </div>
        )}
      />
      <Drawer entry={open} onClose={() => setOpen(null)} />
    </Page>
  );
}
