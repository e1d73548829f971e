/** Admin billing: prices, plans, credits, subscriptions, the ledger and statements (one tab each). */
import { Route, Switch } from 'wouter';
import { useT } from '../../i18n/context';
import { Page } from '../../ui/kit';
import { CreditsPage, SubscriptionsPage } from './credits';
import { LedgerPage, StatementsPage } from './ledger';
import { messages } from './messages';
import { PlansPage } from './plans';
import { PricesPage } from './prices';
import { Tabs } from './tabs';

export default function Area() {
  const t = useT(messages);
  return (
    <Page title={t('title')}>
      <Tabs
        label={t('sections')}
        tabs={[
          { href: '/', label: t('tabPrices') },
          { href: '/plans', label: t('tabPlans') },
          { href: '/credits', label: t('tabCredits') },
          { href: '/subscriptions', label: t('tabSubscriptions') },
          { href: '/ledger', label: t('tabLedger') },
          { href: '/statements', label: t('tabStatements') },
        ]}
      />
      <Switch>
        <Route path="/plans" component={PlansPage} />
        <Route path="/credits" component={CreditsPage} />
        <Route path="/subscriptions" component={SubscriptionsPage} />
        <Route path="/ledger" component={LedgerPage} />
        <Route path="/statements" component={StatementsPage} />
        <Route component={PricesPage} />
      </Switch>
    </Page>
  );
}
