import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { pinnedFirst } from './list';
import { Markdown } from './markdown-view';
import { visibleMessages } from './conversation';
import type { Message } from './types';

describe('reply rendering', () => {
  it('renders code blocks with a copy button and raw HTML as text', () => {
    const html = renderToString(<Markdown text={'Run <script>alert(1)</script> this:\n\n```sh\nnpm test\n```'} />);
    expect(html).toContain('aria-label="Copy code"');
    expect(html).toContain('<code>npm test</code>');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});

describe('list and turn helpers', () => {
  it('puts pinned conversations first, keeping the order within each group', () => {
    const list = [
      { id: 'a', pinned: false },
      { id: 'b', pinned: true },
      { id: 'c', pinned: false },
      { id: 'd', pinned: true },
    ];
    expect(pinnedFirst(list).map((c) => c.id)).toEqual(['b', 'd', 'a', 'c']);
  });

  it('hides the messages a regenerate or an edit replaces', () => {
    const messages = ['m1', 'm2', 'm3'].map((id) => ({ id }) as Message);
    expect(visibleMessages(messages, null)).toHaveLength(3);
    expect(visibleMessages(messages, 'm2').map((m) => m.id)).toEqual(['m1']);
    expect(visibleMessages(messages, 'gone')).toHaveLength(3);
  });
});
