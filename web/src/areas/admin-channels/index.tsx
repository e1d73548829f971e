/** The admin-channels area (not built yet). */
import { Page } from '../../ui/kit';

export default function Area() {
  return (
    <Page title="admin-channels">
      <p className="muted">Coming soon.</p>
    </Page>
  );
}
