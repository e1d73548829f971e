// Lint runs as part of `npm test`. Type-aware rules are kept to the ones that catch real bugs
// (floating promises, misused promises) so the lint pass stays fast.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import switchyard from './eslint-rules/no-string-index-lookup.js';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'storage/**', 'logs/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Lookups by caller-controlled strings must not see Object.prototype (issue 14).
    files: ['src/**/*.ts'],
    plugins: { switchyard },
    rules: { 'switchyard/no-string-index-lookup': 'error' },
  },
  { files: ['**/*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
);
