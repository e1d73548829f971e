/** Pieces the presets pages share: labels of categories / visibilities / roles, the avatar, badges. */
import { useT } from '../../i18n/context';
import { avatarOf, categoryKey, type CategoryKey, type Preset, type Role, type Visibility } from './logic';
import { messages } from './messages';

const CATEGORY_LABEL: Record<CategoryKey, keyof (typeof messages)['en']> = {
  business: 'catBusiness',
  creative: 'catCreative',
  technical: 'catTechnical',
  education: 'catEducation',
  healthcare: 'catHealthcare',
  legal: 'catLegal',
  professional: 'catProfessional',
};
const VISIBILITY_LABEL: Record<Visibility, keyof (typeof messages)['en']> = { private: 'visPrivate', team: 'visTeam', public: 'visPublic' };
const ROLE_LABEL: Record<Role, keyof (typeof messages)['en']> = { system: 'roleSystem', developer: 'roleDeveloper', user: 'roleUser', assistant: 'roleAssistant' };

export function useLabels() {
  const t = useT(messages);
  return {
    t,
    category: (c: string | null) => {
      const key = categoryKey(c);
      return key ? t(CATEGORY_LABEL[key]) : (c ?? '');
    },
    visibility: (v: Visibility) => t(VISIBILITY_LABEL[v]),
    role: (r: Role) => t(ROLE_LABEL[r] ?? 'roleUser'),
  };
}

export function AvatarView({ avatar, size = 'md' }: { avatar: string; size?: 'md' | 'lg' }) {
  const a = avatarOf(avatar);
  const className = `preset-avatar ${size}`;
  if (a?.kind === 'image') return <img className={className} src={a.url} alt="" />;
  return (
    <span className={className} aria-hidden="true">
      {a?.text ?? '✦'}
    </span>
  );
}

/** Built-in / mine / shared, the category and (for your own) who can see it. */
export function PresetBadges({ preset, mine }: { preset: Preset; mine: boolean }) {
  const l = useLabels();
  return (
    <div className="row preset-badges">
      {preset.builtin ? <span className="badge ok">{l.t('builtin')}</span> : mine ? <span className="badge">{l.t('own')}</span> : <span className="badge warn">{l.t('shared')}</span>}
      {preset.category ? <span className="badge">{l.category(preset.category)}</span> : null}
      {mine ? <span className="badge">{l.visibility(preset.visibility)}</span> : null}
    </div>
  );
}
