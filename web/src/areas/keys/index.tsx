/** The keys area (not built yet). */
import { Page } from '../../ui/kit';

export default function Area() {
  return (
    <Page title="keys">
      <p className="muted">Coming soon.</p>
    </Page>
  );
}
