/** Pieces the usage page and the admin dashboard share: the period picker, figures, credits. */
import { useMemo, type ReactNode } from 'react';
import { useLang, useT } from '../../i18n/context';
import { localeOf } from '../../i18n/core';
import { messages } from './messages';
import { TimeChart } from '../../ui/time-chart';
import { PERIODS, type PeriodKey, type UsageRow } from './series';

/** GET /v1/usage and /v1/admin/usage. */
export interface UsageAnswer {
  data: UsageRow[];
  totals: UsageRow;
  has_more: boolean;
}

const PERIOD_LABEL = { '24h': 'period24h', '7d': 'period7d', '30d': 'period30d' } as const;

/** 24 h / 7 d / 30 d as a group of toggle buttons (aria-pressed on the chosen one). */
export function PeriodPicker({ value, onChange }: { value: PeriodKey; onChange: (p: PeriodKey) => void }) {
  const t = useT(messages);
  return (
    <div className="segmented" role="group" aria-label={t('period')}>
      {PERIODS.map((p) => (
        <button key={p} type="button" className={p === value ? '' : 'secondary'} aria-pressed={p === value} onClick={() => onChange(p)}>
          {t(PERIOD_LABEL[p])}
        </button>
      ))}
    </div>
  );
}

/** Figures with their names (a description list: term, value). */
export function Stats({ items }: { items: Array<{ label: string; value: ReactNode; tone?: 'ok' | 'bad' | 'warn' }> }) {
  return (
    <dl className="stats">
      {items.map((item) => (
        <div key={item.label} className={item.tone ? `stat ${item.tone}` : 'stat'}>
          <dt>{item.label}</dt>
          <dd>{item.value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Credits (micro-credits in, up to 6 decimals out) in the UI language's digits. */
export function useCredits(): (micro: number) => string {
  const { lang } = useLang();
  return useMemo(() => {
    const f = new Intl.NumberFormat(localeOf(lang), { minimumFractionDigits: 2, maximumFractionDigits: 6 });
    return (micro: number) => f.format(micro / 1_000_000);
  }, [lang]);
}

/** A chart in a card; a note instead when every value is zero (nothing to draw). */
export function ChartCard({ title, x, series, empty, height = 180 }: { title: string; x: number[]; series: Array<{ label: string; values: Array<number | null> }>; empty?: string; height?: number }) {
  const nothing = series.every((s) => s.values.every((v) => !v));
  return (
    <figure className="card chart-card" style={{ margin: 0 }}>
      <figcaption>
        <h3 className="chart-title">{title}</h3>
      </figcaption>
      {nothing && empty ? <p className="muted">{empty}</p> : <TimeChart x={x} series={series} label={title} height={height} />}
    </figure>
  );
}
