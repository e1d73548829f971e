/** The presets area (not built yet). */
import { Page } from '../../ui/kit';

export default function Area() {
  return (
    <Page title="presets">
      <p className="muted">Coming soon.</p>
    </Page>
  );
}
