import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { I18nProvider } from '../i18n/context';
import { ListSection, TableState } from './kit';

const html = (node: React.ReactNode) => renderToString(<I18nProvider lang="en" setLang={() => {}}>{node}</I18nProvider>);
const table = (rows: readonly string[]) => (
  <table>
    <tbody>
      {rows.map((r) => (
        <tr key={r}>
          <td>{r}</td>
        </tr>
      ))}
    </tbody>
  </table>
);

describe('table state', () => {
  it('says loading until the rows come', () => {
    expect(html(<TableState rows={undefined} table={table} />)).toBe('<p class="muted" role="status">Loading…</p>');
  });
  it('shows nothing for missing rows once loading is over (the error note speaks)', () => {
    expect(html(<TableState rows={null} loading={false} table={table} />)).toBe('');
  });
  it('says the list is empty, in its own words when given', () => {
    expect(html(<TableState rows={[]} table={table} />)).toBe('<p class="muted empty">Nothing here yet.</p>');
    expect(html(<TableState rows={[]} empty="No keys" table={table} footer={() => <nav />} />)).toBe('<p class="muted empty">No keys</p>');
  });
  it('wraps the table, the footer under it', () => {
    expect(html(<TableState rows={['a']} table={table} footer={(rows) => <nav>{rows.length}</nav>} />)).toBe('<div class="table-wrap"><table><tbody><tr><td>a</td></tr></tbody></table></div><nav>1</nav>');
  });
});

describe('list section', () => {
  it('puts the heading in a row with the actions', () => {
    const out = html(<ListSection id="x-h" title="Things" actions={<button type="button">New</button>} rows={['a']} table={table} />);
    expect(out).toMatch(/^<section class="ops-section" aria-labelledby="x-h"><div class="row"><h2 id="x-h">Things<\/h2><span class="spacer"><\/span><button type="button">New<\/button><\/div><div class="table-wrap">/);
  });
  it('keeps the heading bare without actions; intro, error and children in order', () => {
    const out = html(
      <ListSection id="y-h" title="Y" className="card" intro={<p>hint</p>} error={new Error('down')} rows={undefined} table={table}>
        <dialog />
      </ListSection>,
    );
    expect(out).toBe(
      '<section class="card" aria-labelledby="y-h"><h2 id="y-h">Y</h2><p>hint</p><div class="error-note" role="alert"><span>down</span></div><p class="muted" role="status">Loading…</p><dialog></dialog></section>',
    );
  });
});
