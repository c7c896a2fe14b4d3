/**
 * The universal `record` table as MikroORM metadata. Hot paths use SQL through the
 * repositories (microsecond timestamps, row locks); the schema itself is created by the
 * hand-written migrations, never generated from these definitions.
 */
import { EntitySchema } from '@mikro-orm/postgresql';

/** One production entity (docs/api-notes.md, Records). */
export interface RecordEntity {
  id: string;
  entityType: string;
  projectId: string | null;
  status: string | null;
  active: boolean;
  thumbnailId: string | null;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Set when the record is retired (soft delete); revive clears it. */
  retiredAt: Date | null;
  data: Record<string, unknown>;
}

export const RecordEntitySchema = new EntitySchema<RecordEntity>({
  name: 'RecordEntity',
  tableName: 'record',
  schema: 'records',
  properties: {
    id: { type: 'uuid', primary: true },
    entityType: { type: 'text', fieldName: 'entity_type' },
    projectId: { type: 'uuid', fieldName: 'project_id', nullable: true },
    status: { type: 'text', nullable: true },
    active: { type: 'boolean', default: true },
    thumbnailId: { type: 'uuid', fieldName: 'thumbnail_id', nullable: true },
    createdBy: { type: 'uuid', fieldName: 'created_by', nullable: true },
    createdAt: { type: 'datetime', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', fieldName: 'updated_at', columnType: 'timestamptz' },
    retiredAt: { type: 'datetime', fieldName: 'retired_at', columnType: 'timestamptz', nullable: true },
    data: { type: 'json', columnType: 'jsonb' },
  },
});
