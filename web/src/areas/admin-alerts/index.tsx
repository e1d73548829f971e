/** Admin alerts and webhooks: alerts (firing / resolved), alert rules, webhooks and their deliveries. */
import { Route, Switch } from 'wouter';
import { useT } from '../../i18n/context';
import { Page } from '../../ui/kit';
import { Tabs } from '../admin-billing/tabs';
import { AlertsPage } from './alerts';
import { messages } from './messages';
import { RulesPage } from './rules';
import { DeliveriesPage, WebhooksPage } from './webhooks';

export default function Area() {
  const t = useT(messages);
  return (
    <Page title={t('title')}>
      <Tabs
        label={t('sections')}
        tabs={[
          { href: '/', label: t('tabAlerts') },
          { href: '/rules', label: t('tabRules') },
          { href: '/webhooks', label: t('tabWebhooks') },
        ]}
      />
      <Switch>
        <Route path="/rules" component={RulesPage} />
        <Route path="/webhooks/:id">{(params) => <DeliveriesPage id={params.id} />}</Route>
        <Route path="/webhooks" component={WebhooksPage} />
        <Route component={AlertsPage} />
      </Switch>
    </Page>
  );
}
