/** A new chat: model, preset and settings, then the first message (the conversation is made then). */
import { useEffect, useState } from 'react';
import { useLocation } from 'wouter';
import { api } from '../../api/client';
import { useT } from '../../i18n/context';
import { useMe } from '../../session';
import { ErrorNote } from '../../ui/kit';
import { Composer } from './composer';
import { chatMessages } from './messages';
import { setPending } from './pending';
import { ModelSelect, PresetPicker, SettingsFields, useChatModels } from './settings';
import { EMPTY_SETTINGS, settingsBody, type SettingsValue } from './settings-logic';
import { useChatSync } from './sync';
import type { Conversation, Preset } from './types';

export function NewChat() {
  const t = useT(chatMessages);
  const me = useMe();
  const models = useChatModels();
  const sync = useChatSync();
  const [, navigate] = useLocation();
  const [settings, setSettings] = useState<SettingsValue>({ ...EMPTY_SETTINGS, model: me.chat_defaults.default_model ?? '' });
  const [error, setError] = useState<Error | null>(null);

  // No default model: the first one the user may use.
  useEffect(() => {
    if (settings.model === '' && !me.chat_defaults.default_model && models.ids[0]) setSettings((s) => ({ ...s, model: models.ids[0]! }));
  }, [models.ids, settings.model, me.chat_defaults.default_model]);

  const pickPreset = (preset: Preset | null) => {
    const preferred = preset?.model_preferences.find((m) => models.ids.includes(m));
    setSettings((s) => ({ ...s, presetId: preset?.id ?? null, model: preferred ?? s.model }));
  };

  const start = async (content: string, fileIds: string[]): Promise<boolean> => {
    setError(null);
    try {
      const conversation = await api<Conversation>('/v1/conversations', { body: settingsBody(settings) });
      setPending(conversation.id, { content, fileIds });
      sync.bump();
      navigate(`/${conversation.id}`);
      return true;
    } catch (e) {
      setError(e as Error);
      return false;
    }
  };

  return (
    <section className="conversation new-chat-page" aria-label={t('newChat')}>
      <header className="conversation-head">
        <h1>{t('newChat')}</h1>
      </header>
      <div className="messages">
        <p className="muted">{t('startHint')}</p>
        <div className="new-chat-settings">
          <ModelSelect value={settings.model} onChange={(model) => setSettings({ ...settings, model })} models={models.ids} />
          <PresetPicker value={settings.presetId} onChange={pickPreset} />
        </div>
        {models.data && models.ids.length === 0 ? <p className="muted">{t('noModels')}</p> : null}
        <ErrorNote error={models.error} />
        <details className="card">
          <summary>{t('settings')}</summary>
          <SettingsFields value={settings} onChange={setSettings} />
        </details>
        <ErrorNote error={error} />
      </div>
      <Composer streaming={false} onSend={start} onStop={() => {}} />
    </section>
  );
}
