/**
 * The addon tables of schema `schema` (docs/architecture.md, "The schema service", "Addons"):
 * addons with their production version, their immutable versions, the override layers (the
 * studio's: `project_id` null) and the projects' pins.
 */
import { Migration } from '@mikro-orm/migrations';

export class SchemaAddonsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table schema.addon (
      name text primary key,
      production_version text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
    this.addSql(`create table schema.addon_version (
      name text not null references schema.addon (name),
      version text not null,
      title text not null,
      settings_schema jsonb not null,
      defaults jsonb not null,
      digest text not null,
      created_at timestamptz not null default now(),
      primary key (name, version)
    )`);
    this.addSql(`create table schema.addon_override (
      name text not null references schema.addon (name),
      project_id uuid null,
      overrides jsonb not null,
      updated_at timestamptz not null default now()
    )`);
    // One layer per addon and scope; the studio's is the one without a project.
    this.addSql(
      `create unique index addon_override_scope_idx on schema.addon_override (name, coalesce(project_id, '00000000-0000-0000-0000-000000000000'::uuid))`,
    );
    this.addSql(`create table schema.addon_pin (
      name text not null,
      project_id uuid not null,
      version text null,
      updated_at timestamptz not null default now(),
      primary key (name, project_id),
      foreign key (name) references schema.addon (name),
      foreign key (name, version) references schema.addon_version (name, version)
    )`);
    this.addSql('create index addon_pin_version_idx on schema.addon_pin (name, version) where version is not null');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists schema.addon_pin');
    this.addSql('drop table if exists schema.addon_override');
    this.addSql('drop table if exists schema.addon_version');
    this.addSql('drop table if exists schema.addon');
  }
}
