/**
 * The built-in entity types and fields (docs/api-notes.md, Records), seeded at first start.
 * They cannot be deleted or renamed; fields can be added to them. Built-in options belong
 * to fields the platform itself reads (a User's role, a Note's verdict, a Representation's
 * transcode state).
 */
import { mediaPolicy } from '@reelbase/lib-platform';
import type { EntityTypeDef, FieldDef, FieldType, OptionDef, StatusDef } from './schema.types.js';

function opt(code: string, label = code, builtin = true): OptionDef {
  return { code, label, color: null, builtin };
}

function f(code: string, type: FieldType, extra: Partial<FieldDef> = {}): FieldDef {
  return {
    code,
    name: code
      .split('_')
      .map((w, i) => (i === 0 ? w[0]!.toUpperCase() + w.slice(1) : w))
      .join(' '),
    type,
    description: '',
    options: [],
    link_types: [],
    required: false,
    default: null,
    builtin: true,
    ...extra,
  };
}

function t(code: string, projectScoped: boolean, fields: FieldDef[], description = ''): EntityTypeDef {
  return { code, name: code, description, builtin: true, project_scoped: projectScoped, fields };
}

const text = (code: string) => f(code, 'text');
const link = (code: string, ...types: string[]) => f(code, 'link', { link_types: types });
const multiLink = (code: string, ...types: string[]) => f(code, 'multi_link', { link_types: types });

/** Every built-in type with its built-in fields, in the order they are listed. */
export const BUILTIN_TYPES: readonly EntityTypeDef[] = [
  t(
    'Project',
    false,
    [
      text('name'),
      text('code'),
      text('description'),
      f('overrides', 'json'),
      // Who may read the project (docs/api-notes.md, "Restricted projects"); Admin writes Projects.
      f('restricted', 'boolean', { default: false }),
      multiLink('members', 'User'),
    ],
    'A production.',
  ),
  t('Sequence', true, [text('code'), text('description')]),
  t('Shot', true, [text('code'), text('description'), link('sequence', 'Sequence'), f('cut_in', 'integer'), f('cut_out', 'integer')]),
  t('Asset', true, [
    text('code'),
    text('description'),
    f('asset_type', 'enum', {
      options: ['character', 'prop', 'environment', 'vehicle', 'fx'].map((c) => opt(c, c[0]!.toUpperCase() + c.slice(1), false)),
    }),
  ]),
  t('Task', true, [
    text('name'),
    // A step code (checked against the steps, not against options).
    text('step'),
    link('entity'),
    multiLink('assignees', 'User'),
    // A priority code.
    text('priority'),
    f('start_date', 'date'),
    f('due_date', 'date'),
    f('estimate_minutes', 'integer'),
  ]),
  t('User', false, [
    text('name'),
    text('email'),
    f('role', 'enum', { options: ['Admin', 'Supervisor', 'Coordinator', 'Artist', 'Viewer'].map((c) => opt(c)) }),
    f('login_enabled', 'boolean'),
  ]),
  t('Note', true, [
    text('subject'),
    text('content'),
    multiLink('links'),
    link('author', 'User'),
    link('reply_to', 'Note'),
    f('verdict', 'enum', { options: [opt('approve', 'Approve'), opt('needs-changes', 'Needs changes')] }),
    text('guest_name'),
  ]),
  t('Version', true, [text('code'), text('description'), link('entity'), link('task', 'Task'), link('product', 'Product')]),
  t('Product', true, [text('name'), text('product_type'), link('entity')]),
  t('Representation', true, [
    text('name'),
    link('version', 'Version'),
    f('files', 'json'),
    f('transcode_status', 'enum', { options: mediaPolicy.TRANSCODE_STATUSES.map((c) => opt(c)) }),
    text('transcode_error'),
    text('review_kind'),
    text('review_media_key'),
    text('thumbnail_media_key'),
    f('attempts', 'integer'),
  ]),
  t('Playlist', true, [text('name'), multiLink('versions', 'Version')]),
  t('TimeLog', true, [link('user', 'User'), link('task', 'Task'), f('date', 'date'), f('minutes', 'integer'), text('description')]),
  // A render or pipeline job of the farm (docs/farm.md): written by the farm routes only.
  t(
    'FarmJob',
    true,
    [
      text('name'),
      text('kind'),
      text('pool'),
      f('priority', 'integer'),
      text('frames'),
      f('chunk_size', 'integer'),
      f('payload', 'json'),
      text('version_id'),
      text('task_id'),
      f('max_attempts', 'integer'),
      f('depends_on', 'json'),
      text('manager'),
      text('external_id'),
      f('chunks_total', 'integer'),
      f('chunks_done', 'integer'),
      f('chunks_failed', 'integer'),
      f('attempts_failed', 'integer'),
      f('progress', 'integer'),
      text('error'),
    ],
    'A farm job, cut into chunks that agents claim (POST /farm/jobs).',
  ),
  t(
    'Preset',
    false,
    [text('name'), text('target_type'), f('filters', 'json'), f('fields', 'json'), f('order', 'json'), f('shared', 'boolean')],
    'A saved query.',
  ),
];

/**
 * Built-in statuses: the farm's job statuses (docs/farm.md), scoped to FarmJob and seeded like
 * the built-in types (a studio status of the same code that is scoped to some types gets FarmJob
 * added to its scope). Records writes a FarmJob's status only through the farm, so these are
 * the labels, colours and states clients show; they cannot be renamed, nor deleted or narrowed
 * for FarmJob (409 `builtin`).
 */
export const BUILTIN_STATUSES: readonly StatusDef[] = (
  [
    ['queued', 'Queued', 'not_started'],
    ['running', 'Running', 'in_progress'],
    ['done', 'Done', 'done'],
    ['failed', 'Failed', 'blocked'],
    ['paused', 'Paused', 'blocked'],
    ['cancelled', 'Cancelled', 'blocked'],
  ] as const
).map(([code, name, state]) => ({ code, name, color: null, icon: null, state, entity_types: ['FarmJob'] }));

/** The type a built-in status `code` belongs to, or undefined for any other code. */
export function builtinStatusType(code: string): string | undefined {
  return BUILTIN_STATUSES.find((s) => s.code === code)?.entity_types[0];
}

/** True when `code` names a built-in type. */
export function isBuiltinType(code: string): boolean {
  return BUILTIN_TYPES.some((b) => b.code === code);
}
