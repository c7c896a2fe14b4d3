/**
 * Schema `auth`, migration 5 (docs/api-notes.md, Authentication): an API key may be an agent key
 * (`scope` `agent`: it calls only the farm and sitesync agent routes) with the farm pools it claims
 * from (`pools`, a JSON list; null: any pool). Keys issued before are normal keys (both null).
 */
import { Migration } from '@mikro-orm/migrations';

export class AgentKeysMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "auth"."api_key" add column if not exists "scope" text null');
    this.addSql('alter table "auth"."api_key" add column if not exists "pools" jsonb null');
    this.addSql('alter table "auth"."api_key" drop constraint if exists "api_key_scope_check"');
    this.addSql(`alter table "auth"."api_key" add constraint "api_key_scope_check"
      check (("scope" is null and "pools" is null)
          or ("scope" is not distinct from 'agent' and ("pools" is null or jsonb_typeof("pools") = 'array')))`);
  }
}
