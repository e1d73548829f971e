/** The usage area (not built yet). */
import { Page } from '../../ui/kit';

export default function Area() {
  return (
    <Page title="usage">
      <p className="muted">Coming soon.</p>
    </Page>
  );
}
