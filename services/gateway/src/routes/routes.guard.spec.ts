/**
 * What a route file holds (docs/architecture.md, "The gateway"): route definitions. Protobuf
 * messages are mapped to and from JSON in src/mappers/, and who may call a route is its `allow`
 * or a check of routes/route.roles.ts, so no route file imports the generated protobuf code or
 * refuses a role by itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIR = dirname(fileURLToPath(import.meta.url));

const routeFiles = readdirSync(DIR).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'));

describe('route files', () => {
  it('are found', () => {
    expect(routeFiles).toEqual(
      expect.arrayContaining(['farm.routes.ts', 'sitesync.routes.ts', 'entities.routes.ts', 'schema.routes.ts', 'addons.routes.ts', 'route.roles.ts']),
    );
  });

  it.each(routeFiles)('%s imports no generated protobuf code (mapping is in src/mappers/)', (file) => {
    const text = readFileSync(join(DIR, file), 'utf8');
    expect(text).not.toMatch(/from\s+['"]@reelbase\/proto(\/[^'"]*)?['"]/);
    expect(text).not.toMatch(/import\(\s*['"]@reelbase\/proto/);
  });

  it.each(routeFiles.filter((f) => f !== 'route.roles.ts'))('%s refuses no role by itself (allow, or routes/route.roles.ts)', (file) => {
    const text = readFileSync(join(DIR, file), 'utf8');
    expect(text).not.toMatch(/AppError\(\s*'forbidden'/);
    expect(text).not.toMatch(/\.role\s*[!=]==/);
  });
});
