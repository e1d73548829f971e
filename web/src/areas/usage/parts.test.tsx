import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { I18nProvider } from '../../i18n/context';
import type { Lang } from '../../i18n/core';
import { PeriodPicker, Stats } from './parts';

const inLang = (lang: Lang, node: React.ReactNode) => renderToString(<I18nProvider lang={lang} setLang={() => {}}>{node}</I18nProvider>);

describe('period picker', () => {
  it('is a labelled group of buttons, the chosen one pressed', () => {
    const html = inLang('en', <PeriodPicker value="7d" onChange={() => {}} />);
    expect(html).toContain('role="group" aria-label="Period"');
    expect(html).toMatch(/aria-pressed="false"[^>]*>24 hours</);
    expect(html).toMatch(/aria-pressed="true"[^>]*>7 days</);
    expect(html).toMatch(/aria-pressed="false"[^>]*>30 days</);
  });
  it('speaks Chinese', () => {
    expect(inLang('cn', <PeriodPicker value="24h" onChange={() => {}} />)).toContain('时间范围');
  });
});

it('shows figures as terms and values, with their tone', () => {
  const html = inLang('en', <Stats items={[{ label: 'Errors', value: 3, tone: 'bad' }]} />);
  expect(html).toBe('<dl class="stats"><div class="stat bad"><dt>Errors</dt><dd>3</dd></div></dl>');
});
