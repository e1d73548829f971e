/** The account area (not built yet). */
import { Page } from '../../ui/kit';

export default function Area() {
  return (
    <Page title="account">
      <p className="muted">Coming soon.</p>
    </Page>
  );
}
