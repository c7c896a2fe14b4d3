/**
 * The jobs table (`media.jobs`) described for the ORM; reads and writes go through SQL in the
 * repository (docs/architecture.md, "Storage: MikroORM and Knex").
 */
import { EntitySchema } from '@mikro-orm/postgresql';

export interface JobRow {
  id: string;
  representationId: string | null;
  versionId: string;
  projectId: string | null;
  originalKey: string;
  originalSize: string;
  contentType: string;
  fileName: string;
  state: string;
  publishedAt: Date | null;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const JobSchema = new EntitySchema<JobRow>({
  name: 'MediaJob',
  tableName: 'jobs',
  properties: {
    id: { type: 'uuid', primary: true },
    representationId: { type: 'uuid', fieldName: 'representation_id', unique: true, nullable: true },
    versionId: { type: 'uuid', fieldName: 'version_id' },
    projectId: { type: 'uuid', fieldName: 'project_id', nullable: true },
    originalKey: { type: 'text', fieldName: 'original_key' },
    originalSize: { type: 'bigint', fieldName: 'original_size' },
    contentType: { type: 'text', fieldName: 'content_type' },
    fileName: { type: 'text', fieldName: 'file_name' },
    state: { type: 'text' },
    publishedAt: { type: 'Date', fieldName: 'published_at', nullable: true },
    leaseOwner: { type: 'text', fieldName: 'lease_owner', nullable: true },
    leaseUntil: { type: 'Date', fieldName: 'lease_until', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at' },
    updatedAt: { type: 'Date', fieldName: 'updated_at' },
  },
});
