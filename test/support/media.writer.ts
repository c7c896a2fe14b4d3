/**
 * Records written as the media service writes them: over signed gRPC with the stack's internal
 * key and `via: media-transcode`, the only way a Representation's transcode fields are written
 * (docs/api-notes.md, "Roles and who may write"). For specs that need finished reviewables
 * without transcoding real files.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createGrpcClient, MEDIA_SERVICE, type CallContext } from '@reelbase/lib-platform';
import { REPO_ROOT, type Stack } from '@reelbase/lib-testkit';

interface RecordsCalls {
  createRecord(req: { entityType: string; projectId?: string; dataJson: string }, ctx: CallContext): Promise<{ record?: { id: string } }>;
}

export interface MediaWriter {
  /** Creates a Representation with `data` as the media service's job for `userId` (created_by). */
  createRepresentation(projectId: string, data: Record<string, unknown>, userId?: string): Promise<{ id: string }>;
  close(): void;
}

/** A records client of `stack` that signs its calls as the media service. */
export async function mediaWriter(stack: Stack): Promise<MediaWriter> {
  // The generated client, loaded as the services load it (this package does not depend on it).
  const req = createRequire(join(REPO_ROOT, 'services', 'lib-platform', 'package.json'));
  const { recordsv1 } = (await import(pathToFileURL(req.resolve('@reelbase/proto')).href)) as {
    recordsv1: { RecordsServiceClient: never; RecordsServiceService: never };
  };
  const client = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
    name: 'records',
    address: `127.0.0.1:${stack.ports.records!.grpc}`,
    internalAuthSecret: stack.internalAuthSecret,
  });
  const calls = client.call as unknown as RecordsCalls;
  return {
    async createRepresentation(projectId, data, userId = '') {
      const ctx: CallContext = {
        requestId: `e2e-media-${Date.now()}`,
        principal: userId
          ? { userId, role: 'Viewer', authKind: 'token', via: MEDIA_SERVICE }
          : { userId: '', role: 'Service', authKind: 'service', via: MEDIA_SERVICE },
      };
      const res = await calls.createRecord({ entityType: 'Representation', projectId, dataJson: JSON.stringify(data) }, ctx);
      return res.record!;
    },
    close: () => client.close(),
  };
}
