// ESLint flat config: type-aware checks over the TypeScript sources and the Node scripts.
// Only rules whose findings are real bugs in a daemon are on (see docs/architecture.md#linting);
// unused names are left to tsc's noUnusedLocals.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'native/**', 'docker/**', 'examples/**'],
  },
  {
    files: ['core/**/*.ts', 'gitops/**/*.ts', 'cli/**/*.ts', 'runtime/**/*.ts', 'tests/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      // node:test's test()/describe() return promises the runner itself tracks.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-for-in-array': 'error',
      '@typescript-eslint/no-implied-eval': 'error',
      'no-self-compare': 'error',
      'no-unsafe-finally': 'error',
      'no-dupe-keys': 'error',
      'no-cond-assign': 'error',
    },
  },
  {
    // Node scripts, and the dashboard's browser modules (docs/ui.md: plain ES modules, no build step)
    files: ['bin/**/*.mjs', 'tests/**/*.mjs', 'eslint.config.mjs', 'webui/**/*.js'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      'no-self-compare': 'error',
      'no-unsafe-finally': 'error',
      'no-dupe-keys': 'error',
      'no-cond-assign': 'error',
      'no-undef': 'off',
    },
  },
  {
    files: ['webui/theme.js'],
    languageOptions: { sourceType: 'script' },
  },
);
