import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ChannelEditor } from './channel-editor';
import type { ChannelView } from './channel-form';

const channel = (type: ChannelView['type'], config: Record<string, unknown> = {}): ChannelView => ({
  id: 'ch_1',
  name: `${type}-one`,
  type,
  base_url: null,
  effective_base_url: null,
  key: 'sk-…wxyz',
  models: ['m1'],
  model_mapping: {},
  priority: 0,
  weight: 1,
  enabled: true,
  config,
  rate_limits: null,
  retry_config: null,
  fallback_for: [],
  health: { healthy: true, cooldown_until: null, reason: null },
  last_test: null,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
});

const render = (c: ChannelView | null) => renderToString(<ChannelEditor channel={c} onSaved={() => {}} onCancel={() => {}} />);

describe('channel editor', () => {
  it('draws a new channel with the openai defaults and the create button', () => {
    const html = render(null);
    expect(html).toContain('placeholder="https://api.openai.com/v1"');
    expect(html).toContain('Organization');
    expect(html).toContain('Create channel');
    expect(html).not.toContain('AWS region');
  });

  it('shows bedrock credentials and region, and the stored key only masked', () => {
    const html = render(channel('bedrock', { region: 'eu-central-1' }));
    expect(html).toContain('AWS access key ID');
    expect(html).toContain('AWS secret access key');
    expect(html).toContain('value="eu-central-1"');
    expect(html).toContain('placeholder="https://bedrock-runtime.eu-central-1.amazonaws.com"');
    expect(html).toContain('Stored key: sk-…wxyz');
    expect(html).toContain('Save channel');
  });

  it('shows azure deployment and api version, and the rest of the config as JSON', () => {
    const html = render(channel('azure', { deployment: 'prod', custom_flag: true }));
    expect(html).toContain('value="prod"');
    expect(html).toContain('placeholder="2024-10-21"');
    expect(html).toContain('Required for this type');
    expect(html).toContain('&quot;custom_flag&quot;: true');
  });
});
