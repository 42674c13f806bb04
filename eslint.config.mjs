// ESLint flat config: typescript-eslint's type-checked recommended rules over the gateway, the
// dashboard, tests and benchmarks. `npm test` runs it and fails on any warning.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'dist-bench/**', 'coverage/**', 'src/client/generated/**', 'packages/*/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json', './tsconfig.web.json'], tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Unused bindings named with a leading underscore are deliberate (positional parameters).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Adapters implement Promise-returning ports; `async` without `await` keeps a synchronous
      // throw a rejection, which callers rely on.
      '@typescript-eslint/require-await': 'off',
      // The id rule and the terminal-output tests match control characters on purpose.
      'no-control-regex': 'off',
      // The composition root loads optional adapters (Redis, S3, OpenAI, Qdrant) only when configured.
      '@typescript-eslint/no-require-imports': ['error', { allow: ['\\.adapter$'] }],
    },
  },
  {
    // Jest's asymmetric matchers (expect.any, expect.objectContaining, ...) are typed `any`.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { ...globals.node } },
  },
);
