/** The chat area (not built yet). */
import { Page } from '../../ui/kit';

export default function Area() {
  return (
    <Page title="chat">
      <p className="muted">Coming soon.</p>
    </Page>
  );
}
