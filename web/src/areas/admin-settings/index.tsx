/** The admin-settings area (not built yet). */
import { Page } from '../../ui/kit';

export default function Area() {
  return (
    <Page title="admin-settings">
      <p className="muted">Coming soon.</p>
    </Page>
  );
}
