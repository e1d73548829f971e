/**
 * Usage & billing for the signed-in user: usage over a period (charts and a table per model, from
 * GET /v1/usage; costs from the ledger's charges), the balance, the subscription and the plans,
 * the ledger (paged) and the monthly statements.
 */
import { useEffect, useMemo, useState } from 'react';
import { useFormat, useT } from '../../i18n/context';
import { ErrorNote, Loading, Page } from '../../ui/kit';
import { useApi } from '../../ui/use-api';
import { Ledger, Statements, SubscriptionPanel, type CreditBalance } from './billing';
import { messages } from './messages';
import { ChartCard, PeriodPicker, Stats, useCredits, type UsageAnswer } from './parts';
import { bucketStarts, costByModel, costSeries, credits, modelTable, periodRange, seriesByModel, type LedgerEntry, type PeriodKey } from './series';
import './usage.css';

export default function Area() {
  const t = useT(messages);
  const [period, setPeriod] = useState<PeriodKey>('7d');
  // The range is fixed when the period is picked (not on every render: the queries would change).
  const range = useMemo(() => periodRange(period, Date.now()), [period]);
  const balance = useApi<CreditBalance>('/v1/credits');
  const [ledgerVersion, setLedgerVersion] = useState(0);
  const changed = () => {
    void balance.reload();
    setLedgerVersion((v) => v + 1);
  };

  return (
    <Page title={t('title')} actions={<PeriodPicker value={period} onChange={setPeriod} />}>
      <UsageOverview range={range} balance={balance.data} version={ledgerVersion} />
      <section className="usage-section card" aria-labelledby="usage-subscription">
        <h2 id="usage-subscription">{t('subscription')}</h2>
        <ErrorNote error={balance.error} onRetry={() => void balance.reload()} />
        {balance.data ? <SubscriptionPanel subscription={balance.data.subscription} onChanged={changed} /> : balance.loading ? <Loading /> : null}
      </section>
      <Ledger version={ledgerVersion} />
      <Statements />
    </Page>
  );
}

function UsageOverview({ range, balance, version }: { range: ReturnType<typeof periodRange>; balance: CreditBalance | undefined; version: number }) {
  const t = useT(messages);
  const format = useFormat();
  const money = useCredits();
  const bounds = { from: range.from, to: range.to };
  const overTime = useApi<UsageAnswer>('/v1/usage', { ...bounds, group_by: `${range.unit},model`, limit: 10_000 });
  const byModel = useApi<UsageAnswer>('/v1/usage', { ...bounds, group_by: 'model' });
  const charges = useApi<{ data: LedgerEntry[] }>('/v1/billing/ledger', { ...bounds, type: 'charge', limit: 100_000 });
  const reloadCharges = charges.reload;
  // A subscription change writes a fee to the ledger: the costs are read again.
  useEffect(() => {
    if (version > 0) void reloadCharges();
  }, [version, reloadCharges]);

  const x = useMemo(() => bucketStarts(range), [range]);
  const requestSeries = useMemo(() => seriesByModel(overTime.data?.data ?? [], range, 'requests'), [overTime.data, range]);
  const tokenSeries = useMemo(() => seriesByModel(overTime.data?.data ?? [], range, 'total_tokens'), [overTime.data, range]);
  const costs = useMemo(() => costSeries(charges.data?.data ?? [], range).map((s) => ({ label: s.label, values: s.values.map(credits) })), [charges.data, range]);
  const costMap = useMemo(() => costByModel(charges.data?.data ?? []), [charges.data]);
  const lines = useMemo(() => modelTable(byModel.data?.data ?? [], costMap), [byModel.data, costMap]);
  const totalCost = [...costMap.values()].reduce((a, b) => a + b, 0);
  const totals = byModel.data?.totals;

  return (
    <>
      <section className="usage-section" aria-label={t('summary')}>
        <ErrorNote error={overTime.error ?? byModel.error ?? charges.error} onRetry={() => void Promise.all([overTime.reload(), byModel.reload(), charges.reload()])} />
        <Stats
          items={[
            { label: t('balance'), value: balance ? money(balance.balance_micro) : '…', tone: balance && balance.balance_micro <= 0 ? 'bad' : undefined },
            { label: t('requests'), value: totals ? format.number(totals.requests) : '…' },
            { label: t('errors'), value: totals ? format.number(totals.errors) : '…', tone: totals && totals.errors > 0 ? 'warn' : undefined },
            { label: t('tokens'), value: totals ? format.number(totals.total_tokens) : '…' },
            { label: t('cost'), value: charges.data ? money(totalCost) : '…' },
          ]}
        />
      </section>
      {overTime.loading && !overTime.data ? <Loading /> : null}
      {overTime.data ? (
        <div className="charts three">
          <ChartCard title={t('chartRequests')} x={x} series={requestSeries} empty={t('noTraffic')} />
          <ChartCard title={t('chartTokens')} x={x} series={tokenSeries} empty={t('noTraffic')} />
          <ChartCard title={t('chartCost')} x={x} series={costs} empty={t('noTraffic')} />
        </div>
      ) : null}
      <section className="usage-section" aria-labelledby="usage-by-model">
        <h2 id="usage-by-model">{t('byModel')}</h2>
        {lines.length === 0 ? (
          <p className="muted">{byModel.loading ? '…' : t('noTraffic')}</p>
        ) : (
          <div className="table-wrap">
            <table aria-labelledby="usage-by-model">
              <thead>
                <tr>
                  <th scope="col">{t('model')}</th>
                  <th scope="col" className="num">{t('requests')}</th>
                  <th scope="col" className="num">{t('errors')}</th>
                  <th scope="col" className="num">{t('promptTokens')}</th>
                  <th scope="col" className="num">{t('completionTokens')}</th>
                  <th scope="col" className="num">{t('tokens')}</th>
                  <th scope="col" className="num">{t('cost')}</th>
                </tr>
              </thead>
              <tbody>
                {lines.map((l) => (
                  <tr key={l.model}>
                    <th scope="row">{l.model}</th>
                    <td className="num">{format.number(l.requests)}</td>
                    <td className="num">{format.number(l.errors)}</td>
                    <td className="num">{format.number(l.prompt_tokens)}</td>
                    <td className="num">{format.number(l.completion_tokens)}</td>
                    <td className="num">{format.number(l.total_tokens)}</td>
                    <td className="num">{money(l.cost_micro)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
