/** The admin-logs area (not built yet). */
import { Page } from '../../ui/kit';

export default function Area() {
  return (
    <Page title="admin-logs">
      <p className="muted">Coming soon.</p>
    </Page>
  );
}
