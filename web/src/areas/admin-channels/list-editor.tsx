/** A list of short strings: each shown with a remove button, and an input that adds (Enter or the button). */
import { useId, useState } from 'react';
import { addToList } from './channel-form';

export function ListEditor({
  label,
  inputLabel,
  addLabel,
  removeLabel,
  items,
  onChange,
  empty,
  hint,
}: {
  label: string;
  inputLabel: string;
  addLabel: string;
  removeLabel: (item: string) => string;
  items: string[];
  onChange: (items: string[]) => void;
  empty?: string;
  hint?: string;
}) {
  const id = useId();
  const [draft, setDraft] = useState('');
  const add = () => {
    onChange(addToList(items, draft));
    setDraft('');
  };
  return (
    <fieldset className="list-editor">
      <legend>{label}</legend>
      {items.length ? (
        <ul className="chips">
          {items.map((item) => (
            <li key={item} className="chip">
              <span>{item}</span>
              <button type="button" className="icon" aria-label={removeLabel(item)} onClick={() => onChange(items.filter((i) => i !== item))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : empty ? (
        <p className="muted">{empty}</p>
      ) : null}
      <div className="row">
        <input
          id={id}
          aria-label={inputLabel}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            // Enter adds the entry instead of submitting the whole form.
            if (e.key === 'Enter') {
              e.preventDefault();
              add();
            }
          }}
        />
        <button type="button" className="secondary" onClick={add}>
          {addLabel}
        </button>
      </div>
      {hint ? <small className="muted">{hint}</small> : null}
    </fieldset>
  );
}
