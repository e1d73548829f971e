import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { I18nProvider } from '../../i18n/context';
import type { AlertRule } from './logic';
import { RuleEditor } from './rules';

const rule = (kind: AlertRule['condition']['kind'], threshold: number): AlertRule => ({ id: 'r', name: 'R', condition: { kind, threshold, window: 600 }, severity: 'warning', notify: ['wh_a'], enabled: true, state: 'ok', firing: null });
const render = (r: AlertRule | null, lang: 'en' | 'cn' = 'en') =>
  renderToString(
    <I18nProvider lang={lang} setLang={() => {}}>
      <RuleEditor rule={r} webhooks={[{ id: 'wh_a', url: 'https://hooks.example/a', events: ['*'], enabled: true, api_version: 'v2', created_at: '' }]} onDone={() => {}} />
    </I18nProvider>,
  );

describe('the alert rule editor per kind', () => {
  it('asks a share as a percentage, with a window', () => {
    const html = render(rule('relay_error_rate', 0.25));
    expect(html).toContain('Threshold (% of requests)');
    expect(html).toContain('value="25"');
    expect(html).toContain('Window (seconds)');
    expect(html).toContain('1 s to 7d');
  });

  it('has no window for kinds measuring the present, and a day at most for failed logins', () => {
    const unhealthy = render(rule('channel_unhealthy', 0));
    expect(unhealthy).toContain('Threshold (count)');
    expect(unhealthy).not.toContain('Window (seconds)');
    expect(unhealthy).toContain('no window');
    expect(render(rule('failed_logins', 3))).toContain('1 s to 1d');
    expect(render(rule('p95_latency', 800))).toContain('Threshold (ms)');
  });

  it('ticks the webhooks the rule notifies, and speaks Chinese', () => {
    expect(render(rule('p95_latency', 800))).toMatch(/<input type="checkbox" checked=""\/>https:\/\/hooks\.example\/a/);
    expect(render(null, 'cn')).toContain('阈值（请求百分比）');
  });
});
