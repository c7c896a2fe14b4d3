// ESLint for the whole workspace (run by `npm test` and `npm run lint`, after the build so that
// workspace packages resolve to their compiled types). Type-aware: each file is checked with the
// tsconfig.json that includes it; tests, which those tsconfigs leave out, with tsconfig.base.json.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import tseslint from 'typescript-eslint';
import { layersPlugin } from './scripts/eslint-layers.mjs';

/** The configuration for a workspace rooted at `root` (scripts/lint.spec.ts lints fixtures with it). */
export function configFor(root) {
  const packages = readdirSync(join(root, 'services'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  const layers = ['error', { root, packages }];
  return [
    {
      ignores: [
        '**/dist/**',
        '**/node_modules/**',
        'proto/src/gen/**',
        'clients/*/src/generated/**',
        '.data/**',
        '.test-data/**',
        'bench/results/**',
        'coverage/**',
      ],
    },
    {
      linterOptions: { reportUnusedDisableDirectives: 'error' },
    },
    {
      files: ['**/*.ts'],
      languageOptions: {
        parser: tseslint.parser,
        parserOptions: {
          projectService: {
            // Files outside every tsconfig.json (unit and integration tests): globs without `**`.
            allowDefaultProject: [
              'services/*/src/*.spec.ts',
              'services/*/src/*/*.spec.ts',
              'services/*/src/*/*/*.spec.ts',
              'services/*/test/*.ts',
              'services/*/test/*/*.ts',
              'proto/src/*.spec.ts',
              'clients/*/src/*.spec.ts',
              'clients/*/src/*/*.spec.ts',
              'clients/*/test/*.ts',
              'scripts/*.ts',
              '*.ts',
            ],
            defaultProject: 'tsconfig.base.json',
            maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 500,
          },
          tsconfigRootDir: root,
        },
      },
      plugins: { '@typescript-eslint': tseslint.plugin, reelbase: layersPlugin },
      rules: {
        '@typescript-eslint/no-floating-promises': 'error',
        '@typescript-eslint/no-misused-promises': 'error',
        'reelbase/layers': layers,
      },
    },
    {
      files: ['**/*.mjs', '**/*.js'],
      languageOptions: { ecmaVersion: 'latest', sourceType: 'module' },
      plugins: { reelbase: layersPlugin },
      rules: { 'reelbase/layers': layers },
    },
  ];
}

export default configFor(import.meta.dirname);
