/** The admin-billing area (not built yet). */
import { Page } from '../../ui/kit';

export default function Area() {
  return (
    <Page title="admin-billing">
      <p className="muted">Coming soon.</p>
    </Page>
  );
}
