/** The admin-dashboard area (not built yet). */
import { Page } from '../../ui/kit';

export default function Area() {
  return (
    <Page title="admin-dashboard">
      <p className="muted">Coming soon.</p>
    </Page>
  );
}
