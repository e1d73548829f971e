/** The admin-users area (not built yet). */
import { Page } from '../../ui/kit';

export default function Area() {
  return (
    <Page title="admin-users">
      <p className="muted">Coming soon.</p>
    </Page>
  );
}
