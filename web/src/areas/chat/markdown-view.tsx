/** A reply rendered: sanitized Markdown, code blocks highlighted (lazily) with a copy button each. */
import { memo, useEffect, useMemo, useState } from 'react';
import { useT } from '../../i18n/context';
import { CopyButton } from '../../ui/kit';
import { segments } from './markdown';
import { chatMessages } from './messages';

function CodeBlock({ lang, code }: { lang: string; code: string }) {
  const t = useT(chatMessages);
  const [html, setHtml] = useState<string | null>(null);
  useEffect(() => {
    if (!lang) return;
    let live = true;
    void import('./highlight').then((m) => {
      if (live) setHtml(m.highlight(code, lang));
    });
    return () => {
      live = false;
    };
  }, [code, lang]);
  return (
    <div className="code-block">
      <div className="code-head">
        <span className="muted">{lang || 'text'}</span>
        <CopyButton text={code} label={t('copyCode')} />
      </div>
      <pre>
        {/* highlight.js escapes the code it marks up */}
        {html === null ? <code>{code}</code> : <code className="hljs" dangerouslySetInnerHTML={{ __html: html }} />}
      </pre>
    </div>
  );
}

export const Markdown = memo(function Markdown({ text }: { text: string }) {
  const parts = useMemo(() => segments(text), [text]);
  return (
    <div className="markdown">
      {parts.map((part, i) =>
        part.kind === 'code' ? <CodeBlock key={i} lang={part.lang} code={part.code} /> : <div key={i} dangerouslySetInnerHTML={{ __html: part.html }} />,
      )}
    </div>
  );
});
