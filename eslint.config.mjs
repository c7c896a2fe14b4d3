// ESLint for the whole workspace (run by `npm test` and `npm run lint`, after the build so that
// workspace packages resolve to their compiled types). Type-aware: each file is checked with the
// tsconfig.json that includes it; tests, which those tsconfigs leave out, with tsconfig.base.json.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import tseslint from 'typescript-eslint';
import { layersPlugin } from './scripts/eslint-layers.mjs';

const INTERVAL_MESSAGE = "Run periodic work on lib-platform's IntervalLoop (one tick at a time, a stop that waits for it).";

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
              'services/*/src/*/*/*/*.spec.ts',
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
      // Periodic work of a service runs on lib-platform's IntervalLoop, never on a timer of its own
      // (docs/architecture.md, "Service shape and lifecycle"). Not service work, so not covered:
      // lib-testkit (the local stack and its parent watch) and the gateway's body deadline, a
      // per-request watch that lives as long as one upload.
      files: ['services/*/src/**/*.ts'],
      ignores: ['services/*/src/**/*.spec.ts', 'services/lib-testkit/**', 'services/gateway/src/http/body.deadline.ts'],
      rules: {
        'no-restricted-globals': ['error', { name: 'setInterval', message: INTERVAL_MESSAGE }],
        'no-restricted-properties': ['error', { object: 'globalThis', property: 'setInterval', message: INTERVAL_MESSAGE }],
        'no-restricted-imports': [
          'error',
          {
            paths: ['timers', 'node:timers', 'timers/promises', 'node:timers/promises'].map((name) => ({
              name,
              importNames: ['setInterval'],
              message: INTERVAL_MESSAGE,
            })),
          },
        ],
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
