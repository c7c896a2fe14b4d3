/**
 * The addons' {@link ProjectDirectory} over lib-platform's {@link RecordsClient}: whether a project
 * exists, asked as the schema service itself (systemContext).
 */
import { systemContext, type RecordsClient } from '@reelbase/lib-platform';
import type { ProjectDirectory } from '../domain/addons.ports.js';

export class RecordsProjectDirectory implements ProjectDirectory {
  constructor(private readonly records: RecordsClient) {}

  /** A live Project record with that id (a retired one reads as not found). */
  async projectExists(projectId: string): Promise<boolean> {
    return (await this.records.find('Project', projectId, systemContext())) !== null;
  }
}
