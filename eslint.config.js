// ESLint flat config (ESLint 10, typescript-eslint 8). Not type-aware on purpose: fast and needs no tsconfig.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

// Node.js globals for plain JS files (TypeScript files get `no-undef` turned off by typescript-eslint).
// Listed here so the config does not depend on the `globals` package, which is not a devDependency.
const nodeGlobals = Object.fromEntries(
  [
    'AbortController',
    'AbortSignal',
    'Buffer',
    'URL',
    'URLSearchParams',
    'clearImmediate',
    'clearInterval',
    'clearTimeout',
    'console',
    'fetch',
    'global',
    'globalThis',
    'performance',
    'process',
    'queueMicrotask',
    'setImmediate',
    'setInterval',
    'setTimeout',
    'structuredClone',
  ].map((name) => [name, 'readonly']),
);

export default defineConfig(
  {
    ignores: ['dist/', 'node_modules/', 'data/', 'coverage/', '.tmp/', 'bench/results/build/'],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'module',
      globals: nodeGlobals,
    },
    rules: {
      // `const { sub: _dropped, ...rest } = claims` names what it leaves out: not an unused variable.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'warn',
    },
  },
  {
    files: ['bench/**', 'scripts/**'],
    rules: {
      'no-console': 'off',
    },
  },
);
