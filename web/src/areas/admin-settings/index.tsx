/** Admin › System settings: Operations (the tenant's relay and billing switches) and maintenance mode. */
import { useT } from '../../i18n/context';
import { Page } from '../../ui/kit';
import { Maintenance } from './maintenance';
import { messages } from './messages';
import { Operations } from './operations';
import './settings.css';

export default function SettingsArea() {
  const t = useT(messages);
  return (
    <Page title={t('title')}>
      <Operations />
      <Maintenance />
    </Page>
  );
}
