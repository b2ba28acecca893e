// Lint config (ESLint flat config): recommended JS and TypeScript rules for the whole repo.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/results/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Entries merge a function with a namespace to mirror body-parser's callable module.
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }]
    }
  },
  {
    // What is published loads in tools that cannot read `node:` specifiers (Jest 26 and 27 take them for files).
    files: ['src/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^node:', message: 'Use the plain builtin name (zlib, not node:zlib): Jest 26 and 27 cannot load node: specifiers.' }] }] }
  },
  {
    // Consumer and loader fixtures are TypeScript as apps write it against body-parser, `import x = require()` included.
    files: ['test/types/consumer/**', 'test/package/loaders/**'],
    rules: { '@typescript-eslint/no-require-imports': ['error', { allowAsImport: true }] }
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', require: 'readonly', module: 'writable', __dirname: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' }
  }
)
