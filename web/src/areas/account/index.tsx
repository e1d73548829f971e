/**
 * The signed-in user's account: profile, language and theme (the top bar's preferences), chat
 * defaults, password, and two-factor login (enroll with the secret and link shown for copying,
 * verify, recovery codes shown once; disable).
 */
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client';
import type { Theme } from '../../api/types';
import { common } from '../../i18n/common';
import { useLang, useT } from '../../i18n/context';
import { LANGS, type Lang } from '../../i18n/core';
import { useMe, useSession } from '../../session';
import { useTheme } from '../../theme-context';
import { CopyButton, ErrorNote, Field, Page } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import { messages } from './messages';
import { formOf, preferencesPatch } from './prefs';
import '../usage/usage.css';

const LANG_NAMES: Record<Lang, string> = { en: 'English', cn: '中文' };

export default function Area() {
  const t = useT(messages);
  const me = useMe();
  return (
    <Page title={t('title')}>
      <div className="grid">
        <section className="card" aria-labelledby="account-profile">
          <h2 id="account-profile">{t('profile')}</h2>
          <dl className="kv">
            <dt>{t('email')}</dt>
            <dd>{me.email}</dd>
            <dt>{t('role')}</dt>
            <dd>{me.role === 'admin' ? t('roleAdmin') : t('roleUser')}</dd>
            <dt>{t('mfa')}</dt>
            <dd>
              <span className={me.mfa_enabled ? 'badge ok' : 'badge'}>{me.mfa_enabled ? t('mfaOn') : t('mfaOff')}</span>
            </dd>
          </dl>
        </section>
        <Appearance />
      </div>
      <div className="grid" style={{ marginTop: '1rem' }}>
        <ChatDefaults />
        <PasswordForm />
      </div>
      <div style={{ marginTop: '1rem' }}>
        <Mfa />
      </div>
    </Page>
  );
}

function Appearance() {
  const t = useT(messages);
  const c = useT(common);
  const { lang, setLang } = useLang();
  const { theme, setTheme } = useTheme();
  return (
    <section className="card" aria-labelledby="account-appearance">
      <h2 id="account-appearance">{t('appearance')}</h2>
      <Field label={c('language')}>
        {(id) => (
          <select id={id} value={lang} onChange={(e) => setLang(e.target.value as Lang)}>
            {LANGS.map((l) => (
              <option key={l} value={l}>
                {LANG_NAMES[l]}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={c('theme')}>
        {(id) => (
          <select id={id} value={theme} onChange={(e) => setTheme(e.target.value as Theme)}>
            <option value="light">{c('themeLight')}</option>
            <option value="dark">{c('themeDark')}</option>
            <option value="system">{c('themeSystem')}</option>
          </select>
        )}
      </Field>
    </section>
  );
}

function ChatDefaults() {
  const t = useT(messages);
  const me = useMe();
  const { savePreferences } = useSession();
  const [form, setForm] = useState(() => formOf(me.preferences));
  const [saved, setSaved] = useState(false);
  // The models the user may use, as suggestions (the field takes any name).
  const models = useApi<{ data: Array<{ id: string }> }>('/v1/models');
  const save = useAction(async () => {
    await savePreferences(preferencesPatch(form));
    setSaved(true);
  });
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) => {
    setSaved(false);
    setForm({ ...form, [key]: e.target.value });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run();
  };
  return (
    <form className="card" aria-labelledby="account-chat" onSubmit={submit}>
      <h2 id="account-chat">{t('chatDefaults')}</h2>
      <p className="muted">{t('chatDefaultsHint')}</p>
      <Field label={t('defaultModel')} hint={t('defaultModelHint')}>
        {(id) => (
          <>
            <input id={id} list={`${id}-models`} value={form.default_model} onChange={set('default_model')} placeholder={me.chat_defaults.default_model ?? ''} autoComplete="off" />
            <datalist id={`${id}-models`}>
              {models.data?.data.map((m) => (
                <option key={m.id} value={m.id} />
              ))}
            </datalist>
          </>
        )}
      </Field>
      <Field label={t('temperature')} hint={t('temperatureHint')}>
        {(id) => <input id={id} type="number" step="0.1" inputMode="decimal" value={form.temperature} placeholder={String(me.chat_defaults.temperature)} onChange={set('temperature')} />}
      </Field>
      <Field label={t('maxTokens')} hint={t('maxTokensHint')}>
        {(id) => <input id={id} type="number" step="1" inputMode="numeric" value={form.max_tokens} placeholder={String(me.chat_defaults.max_tokens)} onChange={set('max_tokens')} />}
      </Field>
      <ErrorNote error={save.error} />
      <div className="row">
        <button type="submit" disabled={save.busy}>
          {t('saveDefaults')}
        </button>
        {saved ? (
          <span role="status" className="muted">
            {t('saved')}
          </span>
        ) : null}
      </div>
    </form>
  );
}

function PasswordForm() {
  const t = useT(messages);
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [done, setDone] = useState<number | null>(null);
  const [mismatch, setMismatch] = useState(false);
  const change = useAction(async () => {
    const answer = await api<{ sessions_revoked: number }>('/v1/users/me/password', { body: { current_password: current, new_password: next } });
    setDone(answer.sessions_revoked);
    setCurrent('');
    setNext('');
    setRepeat('');
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setDone(null);
    setMismatch(next !== repeat);
    if (next === repeat) void change.run();
  };
  return (
    <form className="card" aria-labelledby="account-password" onSubmit={submit}>
      <h2 id="account-password">{t('password')}</h2>
      <Field label={t('currentPassword')}>{(id) => <input id={id} type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />}</Field>
      <Field label={t('newPassword')}>{(id) => <input id={id} type="password" autoComplete="new-password" required value={next} onChange={(e) => setNext(e.target.value)} />}</Field>
      <Field label={t('confirmPassword')}>{(id) => <input id={id} type="password" autoComplete="new-password" required value={repeat} onChange={(e) => setRepeat(e.target.value)} />}</Field>
      {mismatch ? (
        <p className="error-note" role="alert">
          {t('passwordMismatch')}
        </p>
      ) : null}
      <ErrorNote error={change.error} />
      {done !== null ? (
        <p role="status" className="muted">
          {t('passwordChanged', { n: done })}
        </p>
      ) : null}
      <button type="submit" disabled={change.busy}>
        {t('changePassword')}
      </button>
    </form>
  );
}

interface Enrollment {
  secret: string;
  otpauth_url: string;
  recovery_codes: string[];
}

function Mfa() {
  const t = useT(messages);
  const me = useMe();
  const { reload } = useSession();
  const [enrollment, setEnrollment] = useState<Enrollment | null>(null);
  const [code, setCode] = useState('');
  const [note, setNote] = useState<string | null>(null);
  const enroll = useAction(async () => {
    setNote(null);
    setEnrollment(await api<Enrollment>('/v1/users/me/mfa/enroll', { method: 'POST' }));
  });
  const verify = useAction(async () => {
    await api('/v1/users/me/mfa/verify', { body: { code: code.trim() } });
    setCode('');
    setNote(t('mfaTurnedOn'));
    await reload();
  });
  const disable = useAction(async () => {
    await api('/v1/users/me/mfa/disable', { body: { code: code.trim() } });
    setCode('');
    setEnrollment(null);
    setNote(t('mfaTurnedOff'));
    await reload();
  });

  return (
    <section className="card" aria-labelledby="account-mfa">
      <h2 id="account-mfa">{t('mfa')}</h2>
      {note ? (
        <p role="status" className="badge ok">
          {note}
        </p>
      ) : null}
      {me.mfa_enabled ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void disable.run();
          }}
        >
          <p className="muted">{t('mfaEnabledNote')}</p>
          {/* The recovery codes stay visible after verifying: they are shown this once. */}
          {enrollment ? <RecoveryCodes codes={enrollment.recovery_codes} /> : null}
          <Field label={t('disableCode')}>{(id) => <input id={id} autoComplete="one-time-code" required value={code} onChange={(e) => setCode(e.target.value)} style={{ maxWidth: '16rem' }} />}</Field>
          <ErrorNote error={disable.error} />
          <button type="submit" className="danger" disabled={disable.busy}>
            {t('disable')}
          </button>
        </form>
      ) : (
        <>
          <p className="muted">{t('mfaIntro')}</p>
          <ErrorNote error={enroll.error} />
          {!enrollment ? (
            <button type="button" disabled={enroll.busy} onClick={() => void enroll.run()}>
              {t('enroll')}
            </button>
          ) : (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void verify.run();
              }}
            >
              <p>{t('enrollSteps')}</p>
              <Field label={t('secret')}>{(id) => <input id={id} readOnly value={enrollment.secret} className="mono" onFocus={(e) => e.target.select()} />}</Field>
              <div className="row" style={{ marginBottom: '0.75rem' }}>
                <CopyButton text={enrollment.secret} label={t('copySecret')} />
              </div>
              <Field label={t('otpauthUri')}>{(id) => <input id={id} readOnly value={enrollment.otpauth_url} className="mono" onFocus={(e) => e.target.select()} />}</Field>
              <div className="row" style={{ marginBottom: '0.75rem' }}>
                <CopyButton text={enrollment.otpauth_url} label={t('copyUri')} />
                <a href={enrollment.otpauth_url}>{t('otpauthUri')}</a>
              </div>
              <RecoveryCodes codes={enrollment.recovery_codes} />
              <Field label={t('code')}>
                {(id) => <input id={id} inputMode="numeric" autoComplete="one-time-code" required value={code} onChange={(e) => setCode(e.target.value)} style={{ maxWidth: '12rem' }} />}
              </Field>
              <ErrorNote error={verify.error} />
              <button type="submit" disabled={verify.busy}>
                {t('verify')}
              </button>
            </form>
          )}
        </>
      )}
    </section>
  );
}

function RecoveryCodes({ codes }: { codes: string[] }) {
  const t = useT(messages);
  return (
    <div className="field">
      <h3 className="chart-title">{t('recoveryCodes')}</h3>
      <p className="muted">{t('recoveryHint')}</p>
      <ul className="recovery-codes mono" aria-label={t('recoveryCodes')}>
        {codes.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ul>
      <div className="row">
        <CopyButton text={codes.join('\n')} label={t('copyCodes')} />
      </div>
    </div>
  );
}
