// ESLint for the whole workspace (run by `npm test` and `npm run lint`, after the build so that
// workspace packages resolve to their compiled types). Type-aware: each file is checked with the
// tsconfig.json that includes it; tests, which those tsconfigs leave out, with tsconfig.base.json.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import tseslint from 'typescript-eslint';
import { layersPlugin } from './scripts/eslint-layers.mjs';

const INTERVAL_MESSAGE = "Run periodic work on lib-platform's IntervalLoop (one tick at a time, a stop that waits for it).";
const SQL_MESSAGE =
  'Hand-written SQL goes through Knex: the ORM\'s (`orm.em.getConnection().getKnex()`) or lib-platform\'s openSqlPool, with `db.raw`, `db.transaction`, `sqlRows`, `queryPrepared` or `LockedConnection` (docs/architecture.md, "Storage: MikroORM and Knex").';

const TIMER_IMPORTS = ['timers', 'node:timers', 'timers/promises', 'node:timers/promises'].map((name) => ({
  name,
  importNames: ['setInterval'],
  message: INTERVAL_MESSAGE,
}));
const SQL_IMPORTS = ['pg', 'pg-pool', 'pg-cursor', 'pg-query-stream'].map((name) => ({ name, message: SQL_MESSAGE }));
/** `<x>.getConnection().execute(...)` and `em.execute(...)`: MikroORM's raw SQL, a second way beside Knex. */
const SQL_SYNTAX = [
  "CallExpression[callee.property.name='execute'][callee.object.type='CallExpression'][callee.object.callee.property.name='getConnection']",
  "CallExpression[callee.property.name='execute'][callee.object.name='em']",
  "CallExpression[callee.property.name='execute'][callee.object.property.name='em']",
].map((selector) => ({ selector, message: SQL_MESSAGE }));

/** Where the platform itself reaches below Knex: MikroORM's set-up and the named pools. */
const SQL_PLATFORM_FILES = ['services/lib-platform/src/db.ts', 'services/lib-platform/src/sql.pool.ts'];

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
        'no-restricted-imports': ['error', { paths: [...TIMER_IMPORTS, ...SQL_IMPORTS] }],
      },
    },
    {
      // One way for hand-written SQL: Knex (docs/architecture.md, "Storage: MikroORM and Knex").
      // No `pg` import and no MikroORM `execute` in a service; tests and the stack harness
      // (lib-testkit) may. The options of `no-restricted-imports` replace those above, so the
      // files that keep the SQL imports keep the timer ones.
      files: ['services/*/src/**/*.ts'],
      ignores: ['services/*/src/**/*.spec.ts', 'services/lib-testkit/**', ...SQL_PLATFORM_FILES],
      rules: { 'no-restricted-syntax': ['error', ...SQL_SYNTAX] },
    },
    {
      files: ['services/gateway/src/http/body.deadline.ts'],
      rules: { 'no-restricted-imports': ['error', { paths: SQL_IMPORTS }] },
    },
    {
      files: SQL_PLATFORM_FILES,
      rules: { 'no-restricted-imports': ['error', { paths: TIMER_IMPORTS }] },
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
