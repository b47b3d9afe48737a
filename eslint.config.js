'use strict'

const js = require('@eslint/js')
const globals = require('globals')

module.exports = [
  { ignores: ['index.js', 'index.d.ts', 'target/**', 'npm/**', 'node_modules/**', '__test__/site/**'] },
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'commonjs', globals: { ...globals.node } },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
]
