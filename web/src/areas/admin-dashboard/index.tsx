/**
 * The admin dashboard: the tenant's requests, errors, latency, tokens and cost over a period
 * (GET /v1/admin/usage by hour or day; costs from the ledger's charges), channel health at a
 * glance, the alerts firing, and the way to the admin pages.
 */
import { useMemo, useState, type ReactNode } from 'react';
import { Link } from 'wouter';
import type { ListOf } from '../../api/types';
import { common } from '../../i18n/common';
import { useFormat, useT } from '../../i18n/context';
import { ErrorNote, Loading, Page, TableState } from '../../ui/kit';
import { useApi } from '../../ui/use-api';
import { ChartCard, PeriodPicker, Stats, useCredits, type UsageAnswer } from '../usage/parts';
import { bucketStarts, costSeries, credits, fillBuckets, latencyBuckets, periodRange, type LedgerEntry, type PeriodKey } from '../usage/series';
import '../usage/usage.css';
import { byUrgency, healthCounts, healthState, type ChannelHealth, type HealthState } from './health';
import { messages } from './messages';

interface Channel extends ChannelHealth {
  id: string;
  name: string;
  type: string;
  last_test: { ok: boolean; latency_ms: number | null; error: string | null; tested_at: string } | null;
}
interface Alert {
  id: string;
  rule_name: string;
  severity: 'info' | 'warning' | 'critical';
  message: string;
  fired_at: string;
}

const ADMIN_LINKS = [
  ['/admin/channels', 'navChannels'],
  ['/admin/users', 'navUsers'],
  ['/admin/settings', 'navSettings'],
  ['/admin/billing', 'navBilling'],
  ['/admin/logs', 'navLogs'],
  ['/admin/alerts', 'navAlerts'],
] as const;

export default function Area() {
  const t = useT(messages);
  const c = useT(common);
  const [period, setPeriod] = useState<PeriodKey>('24h');
  const range = useMemo(() => periodRange(period, Date.now()), [period]);
  return (
    <Page title={t('title')} actions={<PeriodPicker value={period} onChange={setPeriod} />}>
      <UsageCharts range={range}>
        <div className="grid" style={{ marginBottom: '1rem' }}>
          <Channels />
          <Alerts />
        </div>
      </UsageCharts>
      <nav className="card" aria-label={c('navAdmin')} style={{ marginTop: '1rem' }}>
        <h2>{c('navAdmin')}</h2>
        <ul className="row plain-list admin-links">
          {ADMIN_LINKS.map(([href, label]) => (
            <li key={href}>
              {/* "~": an absolute path out of this area's nested router. */}
              <Link href={`~${href}`}>{c(label)}</Link>
            </li>
          ))}
        </ul>
      </nav>
    </Page>
  );
}

/** The period's figures, then `children` (what needs a glance), then the charts. */
function UsageCharts({ range, children }: { range: ReturnType<typeof periodRange>; children: ReactNode }) {
  const t = useT(messages);
  const format = useFormat();
  const money = useCredits();
  const bounds = { from: range.from, to: range.to };
  const usage = useApi<UsageAnswer>('/v1/admin/usage', { ...bounds, group_by: range.unit, limit: 10_000 });
  const charges = useApi<{ data: LedgerEntry[] }>('/v1/admin/billing/ledger', { ...bounds, type: 'charge', limit: 100_000 });
  const x = useMemo(() => bucketStarts(range), [range]);
  const charts = useMemo(() => {
    const rows = usage.data?.data ?? [];
    const perModel = costSeries(charges.data?.data ?? [], range);
    const cost = x.map((_, i) => credits(perModel.reduce((sum, s) => sum + s.values[i]!, 0)));
    return {
      requests: [
        { label: t('requests'), values: fillBuckets(rows, range, 'requests') },
        { label: t('errors'), values: fillBuckets(rows, range, 'errors') },
      ],
      latency: [{ label: t('avgLatency'), values: latencyBuckets(rows, range) }],
      tokens: [
        { label: t('promptTokens'), values: fillBuckets(rows, range, 'prompt_tokens') },
        { label: t('completionTokens'), values: fillBuckets(rows, range, 'completion_tokens') },
      ],
      cost: [{ label: t('cost'), values: cost }],
    };
  }, [usage.data, charges.data, range, x, t]);
  const totals = usage.data?.totals;
  const costTotal = (charges.data?.data ?? []).reduce((sum, e) => sum - e.amount_micro, 0);
  const rate = totals && totals.requests > 0 ? totals.errors / totals.requests : 0;

  return (
    <>
      <section aria-label={t('totals')}>
      <ErrorNote error={usage.error ?? charges.error} onRetry={() => void Promise.all([usage.reload(), charges.reload()])} />
      <Stats
        items={[
          { label: t('requests'), value: totals ? format.number(totals.requests) : '…' },
          { label: t('errors'), value: totals ? format.number(totals.errors) : '…', tone: totals && totals.errors > 0 ? 'bad' : undefined },
          { label: t('errorRate'), value: totals ? `${(rate * 100).toFixed(1)} %` : '…', tone: rate > 0.05 ? 'bad' : undefined },
          { label: t('avgLatency'), value: totals ? (totals.avg_latency_ms === null ? '—' : t('ms', { n: format.number(Math.round(totals.avg_latency_ms)) })) : '…' },
          { label: t('tokens'), value: totals ? format.number(totals.total_tokens) : '…' },
          { label: t('cost'), value: charges.data ? money(costTotal) : '…' },
        ]}
      />
      </section>
      {children}
      {usage.loading && !usage.data ? <Loading /> : null}
      {usage.data ? (
        <div className="charts">
          <ChartCard title={t('chartRequests')} x={x} series={charts.requests} empty={t('noTraffic')} />
          <ChartCard title={t('chartLatency')} x={x} series={charts.latency} empty={t('noTraffic')} />
          <ChartCard title={t('chartTokens')} x={x} series={charts.tokens} empty={t('noTraffic')} />
          <ChartCard title={t('chartCost')} x={x} series={charts.cost} empty={t('noTraffic')} />
        </div>
      ) : null}
    </>
  );
}

const BADGE: Record<HealthState, string> = { healthy: 'badge ok', cooling: 'badge warn', unhealthy: 'badge bad', off: 'badge' };

function Channels() {
  const t = useT(messages);
  const format = useFormat();
  const channels = useApi<ListOf<Channel>>('/v1/admin/channels');
  const now = Date.now();
  const list = byUrgency(channels.data?.data ?? [], now);
  const counts = healthCounts(list, now);
  const stateText = (ch: Channel, state: HealthState) =>
    state === 'healthy' ? t('healthy') : state === 'off' ? t('off') : state === 'cooling' ? t('coolingDown', { time: format.dateTime(ch.health.cooldown_until!) }) : t('unhealthy');
  return (
    <section className="card" aria-labelledby="dash-channels">
      <div className="row">
        <h2 id="dash-channels">{t('channels')}</h2>
        <div className="spacer" />
        {channels.data ? <span className={counts.healthy === counts.total ? 'badge ok' : 'badge bad'}>{t('healthSummary', counts)}</span> : null}
      </div>
      <ErrorNote error={channels.error} onRetry={() => void channels.reload()} />
      <TableState
        rows={channels.data ? list : undefined}
        loading={channels.loading}
        empty={t('noChannels')}
        table={(rows) => (
          <table aria-labelledby="dash-channels">
            <thead>
              <tr>
                <th scope="col">{t('channel')}</th>
                <th scope="col">{t('state')}</th>
                <th scope="col">{t('lastTest')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((ch) => {
                const state = healthState(ch, now);
                return (
                  <tr key={ch.id}>
                    <th scope="row">
                      <Link href={`~/admin/channels/${encodeURIComponent(ch.id)}`} className="nowrap">{ch.name}</Link> <span className="muted">{ch.type}</span>
                    </th>
                    <td>
                      <span className={BADGE[state]}>{stateText(ch, state)}</span>
                      {ch.health.reason && state !== 'healthy' ? <div className="muted">{ch.health.reason}</div> : null}
                    </td>
                    <td>{ch.last_test ? (ch.last_test.ok ? t('testOk', { ms: ch.last_test.latency_ms ?? '?' }) : t('testFailed', { error: ch.last_test.error ?? '?' })) : <span className="muted">{t('never')}</span>}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      />
    </section>
  );
}

const SEVERITY_BADGE = { info: 'badge', warning: 'badge warn', critical: 'badge bad' } as const;

function Alerts() {
  const t = useT(messages);
  const format = useFormat();
  const alerts = useApi<ListOf<Alert>>('/api/admin/alerts', { state: 'firing', limit: 50 });
  const severity = { info: t('sevInfo'), warning: t('sevWarning'), critical: t('sevCritical') };
  return (
    <section className="card" aria-labelledby="dash-alerts">
      <h2 id="dash-alerts">{t('alerts')}</h2>
      <ErrorNote error={alerts.error} onRetry={() => void alerts.reload()} />
      {alerts.loading && !alerts.data ? <Loading /> : null}
      {alerts.data && alerts.data.data.length === 0 ? <p className="badge ok">{t('noAlerts')}</p> : null}
      {alerts.data && alerts.data.data.length > 0 ? (
        <ul className="plain-list" aria-labelledby="dash-alerts">
          {alerts.data.data.map((a) => (
            <li key={a.id}>
              <div className="row">
                <span className={SEVERITY_BADGE[a.severity]}>{severity[a.severity]}</span>
                <strong>{a.rule_name}</strong>
                <span className="muted">{t('since', { time: format.dateTime(a.fired_at) })}</span>
              </div>
              <div>{a.message}</div>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
