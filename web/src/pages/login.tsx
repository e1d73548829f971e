/** Sign in: email and password, then the MFA code when the account has MFA on. */
import { useState, type FormEvent } from 'react';
import { defineMessages } from '../i18n/core';
import { useT } from '../i18n/context';
import { useSession } from '../session';
import { Field } from '../ui/kit';
import { ShellControls } from '../shell-controls';

const messages = defineMessages({
  en: {
    title: 'Sign in to Switchyard',
    email: 'Email',
    password: 'Password',
    mfaCode: 'Authentication code',
    mfaHint: 'The 6-digit code from your authenticator app, or a recovery code.',
    signIn: 'Sign in',
    verify: 'Verify',
    back: 'Back',
  },
  cn: {
    title: '登录 Switchyard',
    email: '邮箱',
    password: '密码',
    mfaCode: '验证码',
    mfaHint: '身份验证器中的 6 位验证码，或一个恢复码。',
    signIn: '登录',
    verify: '验证',
    back: '返回',
  },
});

export function LoginPage() {
  const t = useT(messages);
  const { login } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [mfaStep, setMfaStep] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const result = await login(email, password, mfaStep ? code : undefined);
    setBusy(false);
    if (result.ok) return;
    if (result.mfaRequired && !mfaStep) {
      setMfaStep(true);
      return;
    }
    setError(result.message);
  };

  return (
    <main className="login">
      <form className="card login-card" onSubmit={(e) => void submit(e)} aria-label={t('title')}>
        <h1>{t('title')}</h1>
        {!mfaStep ? (
          <>
            <Field label={t('email')}>{(id) => <input id={id} type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />}</Field>
            <Field label={t('password')}>
              {(id) => <input id={id} type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />}
            </Field>
          </>
        ) : (
          <Field label={t('mfaCode')} hint={t('mfaHint')}>
            {(id) => <input id={id} inputMode="numeric" autoComplete="one-time-code" required value={code} onChange={(e) => setCode(e.target.value)} autoFocus />}
          </Field>
        )}
        {error ? (
          <p className="error-note" role="alert">
            {error}
          </p>
        ) : null}
        <div className="row">
          {mfaStep ? (
            <button type="button" className="secondary" onClick={() => setMfaStep(false)}>
              {t('back')}
            </button>
          ) : null}
          <button type="submit" disabled={busy}>
            {mfaStep ? t('verify') : t('signIn')}
          </button>
        </div>
        <ShellControls />
      </form>
    </main>
  );
}
