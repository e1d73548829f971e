/** The gallery: search, scope (all / built-in / mine / shared), category and tag filters, cards. */
import { useEffect, useRef, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api } from '../../api/client';
import { useFormat } from '../../i18n/context';
import { useMe } from '../../session';
import { Empty, ErrorNote, Field, Loading, Page } from '../../ui/kit';
import { useAction } from '../../ui/use-api';
import { CATEGORIES, searchQuery, topTags, type GalleryFilter, type Preset, type PresetPage, type Scope } from './logic';
import { AvatarView, PresetBadges, useLabels } from './shared';

const SCOPES: Array<{ scope: Scope; label: 'scopeAll' | 'scopeBuiltin' | 'scopeMine' | 'scopeShared' }> = [
  { scope: 'all', label: 'scopeAll' },
  { scope: 'builtin', label: 'scopeBuiltin' },
  { scope: 'mine', label: 'scopeMine' },
  { scope: 'shared', label: 'scopeShared' },
];

/** The filter survives a visit to a preset and back (same tab). */
const FILTER_KEY = 'sy.presets.filter';
const EMPTY_FILTER: GalleryFilter = { q: '', scope: 'all', category: '', tags: [] };
function storedFilter(): GalleryFilter {
  try {
    return { ...EMPTY_FILTER, ...(JSON.parse(sessionStorage.getItem(FILTER_KEY) ?? '{}') as Partial<GalleryFilter>) };
  } catch {
    return EMPTY_FILTER;
  }
}

export function Gallery() {
  const l = useLabels();
  const { t } = l;
  const fmt = useFormat();
  const me = useMe();
  const [, navigate] = useLocation();
  const [filter, setFilter] = useState<GalleryFilter>(storedFilter);
  const [typed, setTyped] = useState(filter.q);
  const [page, setPage] = useState<PresetPage | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [loading, setLoading] = useState(false);
  const ticket = useRef(0);

  // Typing searches after a short pause, not on every key.
  useEffect(() => {
    const timer = setTimeout(() => setFilter((f) => (f.q === typed ? f : { ...f, q: typed })), 250);
    return () => clearTimeout(timer);
  }, [typed]);

  const load = async (offset: number) => {
    const mine = ++ticket.current;
    setLoading(true);
    try {
      const answer = await api<PresetPage>('/api/presets/search', { query: searchQuery(filter, offset) });
      if (mine !== ticket.current) return;
      setPage((prev) => (offset > 0 && prev ? { ...answer, data: [...prev.data, ...answer.data] } : answer));
      setError(null);
    } catch (e) {
      if (mine === ticket.current) setError(e as Error);
    } finally {
      if (mine === ticket.current) setLoading(false);
    }
  };

  const filterKey = JSON.stringify(filter);
  useEffect(() => {
    try {
      sessionStorage.setItem(FILTER_KEY, JSON.stringify(filter));
    } catch {
      // storage off: the filter lasts for this page only
    }
    void load(0);
    // Reload exactly when the filter's value changes (load reads the current filter).
  }, [filterKey]);

  const clone = useAction(async (preset: Preset) => {
    const copy = await api<Preset>(`/api/presets/${encodeURIComponent(preset.id)}/clone`, { body: { modifications: {} } });
    navigate(`/${copy.id}?cloned=1`);
  });

  const presets = page?.data ?? [];
  // Tag choices: those of the results, plus the ones chosen (they stay clickable to remove).
  const tagChoices = [...new Set([...filter.tags, ...topTags(presets)])];
  const toggleTag = (tag: string) => setFilter((f) => ({ ...f, tags: f.tags.includes(tag) ? f.tags.filter((x) => x !== tag) : [...f.tags, tag] }));
  const filtered = filter.q || filter.category || filter.tags.length > 0 || filter.scope !== 'all';

  return (
    <Page
      title={t('title')}
      actions={
        <Link href="/new" className="button">
          {t('newPreset')}
        </Link>
      }
    >
      <p className="muted">{t('intro')}</p>
      <div className="preset-filters">
        <Field label={t('searchLabel')}>{(id) => <input id={id} type="search" value={typed} placeholder={t('searchPlaceholder')} onChange={(e) => setTyped(e.target.value)} />}</Field>
        <Field label={t('categoryLabel')}>
          {(id) => (
            <select id={id} value={filter.category} onChange={(e) => setFilter({ ...filter, category: e.target.value })}>
              <option value="">{t('anyCategory')}</option>
              {CATEGORIES.map((c) => (
                <option key={c} value={c}>
                  {l.category(c)}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <div className="row preset-scopes" role="group" aria-label={t('scopeLabel')}>
        {SCOPES.map(({ scope, label }) => (
          <button key={scope} type="button" className={filter.scope === scope ? undefined : 'secondary'} aria-pressed={filter.scope === scope} onClick={() => setFilter({ ...filter, scope })}>
            {t(label)}
          </button>
        ))}
      </div>
      {tagChoices.length > 0 ? (
        <div className="row preset-tags" role="group" aria-label={t('tagsFilter')}>
          {tagChoices.map((tag) => (
            <button key={tag} type="button" className="preset-tag" aria-pressed={filter.tags.includes(tag)} onClick={() => toggleTag(tag)}>
              #{tag}
            </button>
          ))}
        </div>
      ) : null}
      <div className="row preset-summary">
        <span className="muted" role="status">
          {page ? t('results', { count: fmt.number(page.total) }) : null}
        </span>
        {filtered ? (
          <button
            type="button"
            className="link"
            onClick={() => {
              setTyped('');
              setFilter(EMPTY_FILTER);
            }}
          >
            {t('clearFilters')}
          </button>
        ) : null}
      </div>
      <ErrorNote error={error ?? clone.error} onRetry={error ? () => void load(0) : undefined} />
      {page && presets.length === 0 ? <Empty>{t('noResults')}</Empty> : null}
      <ul className="preset-grid" aria-label={t('title')}>
        {presets.map((p) => (
          <li key={p.id} className="card preset-card">
            <div className="preset-card-head">
              <AvatarView avatar={p.avatar} />
              <h2>
                <Link href={`/${p.id}`} aria-label={t('openPreset', { name: p.name })}>
                  {p.name}
                </Link>
              </h2>
            </div>
            <PresetBadges preset={p} mine={p.owner_id === me.id} />
            <p className="preset-description">{p.description}</p>
            {p.tags.length > 0 ? <p className="muted preset-card-tags">{p.tags.map((tag) => `#${tag}`).join(' ')}</p> : null}
            <div className="row preset-card-actions">
              <Link href={`~/chat?preset=${encodeURIComponent(p.id)}`} className="button">
                {t('startChat')}
              </Link>
              <button type="button" className="secondary" disabled={clone.busy} aria-label={t('clonePreset', { name: p.name })} onClick={() => void clone.run(p)}>
                {t('clone')}
              </button>
            </div>
          </li>
        ))}
      </ul>
      {loading ? <Loading /> : null}
      {page?.next_offset !== null && page?.next_offset !== undefined && !loading ? (
        <button type="button" className="secondary preset-more" onClick={() => void load(page.next_offset!)}>
          {t('loadMore')}
        </button>
      ) : null}
    </Page>
  );
}
