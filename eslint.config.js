import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', '.dist-next-*/', 'coverage/', 'node_modules/', 'data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Nest's decorators and supertest's bodies are typed `any` by their libraries.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // No focused or disabled test left behind (Jest's and node:test's spellings): a focused one silently
  // turns the rest of its file off, a disabled one passes by not running. Delete a test instead.
  {
    files: ['**/*.spec.ts', '**/*-spec.ts', '**/*.test.mjs'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['describe', 'it', 'test'].flatMap((object) =>
          ['only', 'skip', 'todo'].map((property) => ({ object, property, message: `${object}.${property} leaves tests out of the run` })),
        ),
      ],
      'no-restricted-globals': [
        'error',
        ...['fdescribe', 'fit', 'xdescribe', 'xit', 'xtest'].map((name) => ({ name, message: `${name} leaves tests out of the run` })),
      ],
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  { files: ['**/*.js', '**/*.mjs'], languageOptions: { globals: globals.node } },
  // Last: turns off the rules that are Prettier's business (npm run format; `prettier --check` in npm run lint).
  prettier,
);
