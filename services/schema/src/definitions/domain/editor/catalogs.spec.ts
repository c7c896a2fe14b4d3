import { describe, expect, it } from 'vitest';
import { problems, seeded } from '../../../../test/editor.world.js';
import { setApplications, setBranding, setTools } from './catalogs.js';

describe('branding and catalogs', () => {
  it('branding: unset keys are null, one event', () => {
    const edit = setBranding(seeded(), { studio_name: 'Studio' });
    expect(edit.result).toEqual({ studio_name: 'Studio', logo_media_key: null, primary_color: null, accent_color: null });
    expect(edit.changes).toEqual([{ kind: 'Schema.Branding', key: 'studio', action: 'update', changes: edit.result }]);
  });

  it('applications: stored with their defaults; a code listed twice is 422', () => {
    const edit = setApplications(seeded(), { applications: [{ code: 'nuke', label: 'Nuke' }] });
    expect(edit.result).toEqual({
      applications: [{ code: 'nuke', label: 'Nuke', group: null, version: null, icon: null, executables: {}, args: [], environment: {} }],
    });
    const twice = { code: 'nuke', label: 'Nuke' };
    expect(problems(() => setApplications(seeded(), { applications: [twice, twice] })).map((p) => p.loc)).toEqual([['body', 'applications', 1, 'code']]);
  });

  it('tools: stored with their defaults; a tool or a version listed twice is 422', () => {
    const edit = setTools(seeded(), { tools: [{ tool: 'maya', label: 'Maya', variants: [{ version: '2025' }] }] });
    expect(edit.result).toEqual({ tools: [{ tool: 'maya', label: 'Maya', icon: null, variants: [{ version: '2025', args: [], environment: {} }] }] });
    const maya = { tool: 'maya', label: 'Maya', variants: [{ version: '1' }, { version: '1' }] };
    expect(problems(() => setTools(seeded(), { tools: [maya, maya] })).map((p) => p.loc)).toEqual([
      ['body', 'tools', 1, 'tool'],
      ['body', 'tools', 0, 'variants', 1, 'version'],
      ['body', 'tools', 1, 'variants', 1, 'version'],
    ]);
  });
});
