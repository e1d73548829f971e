/** The admin-alerts area (not built yet). */
import { Page } from '../../ui/kit';

export default function Area() {
  return (
    <Page title="admin-alerts">
      <p className="muted">Coming soon.</p>
    </Page>
  );
}
