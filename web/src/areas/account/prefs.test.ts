import { describe, expect, it } from 'vitest';
import { formOf, preferencesPatch } from './prefs';

describe('chat defaults form', () => {
  it('sends numbers as numbers and empty fields as null (removed: the defaults apply)', () => {
    expect(preferencesPatch({ default_model: ' gpt-4o ', temperature: '0.3', max_tokens: '512' })).toEqual({ default_model: 'gpt-4o', temperature: 0.3, max_tokens: 512 });
    expect(preferencesPatch({ default_model: '', temperature: ' ', max_tokens: '' })).toEqual({ default_model: null, temperature: null, max_tokens: null });
  });
  it('leaves a bad number for the server to refuse (its message is shown)', () => {
    expect(preferencesPatch({ default_model: 'm', temperature: 'abc', max_tokens: '1.5' })).toEqual({ default_model: 'm', temperature: 'abc', max_tokens: 1.5 });
  });
  it('starts from the stored keys only', () => {
    expect(formOf({ temperature: 1.2, theme: 'dark' })).toEqual({ default_model: '', temperature: '1.2', max_tokens: '' });
    expect(formOf({ default_model: 'm', max_tokens: 100, temperature: { bad: true } })).toEqual({ default_model: 'm', temperature: '', max_tokens: '100' });
  });
});
