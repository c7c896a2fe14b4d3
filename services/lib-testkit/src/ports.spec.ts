import { describe, expect, it } from 'vitest';
import { freePorts, portIsFree } from './ports.js';

describe('freePorts', () => {
  it('hands out distinct bindable ports below the ephemeral range outgoing connections use', async () => {
    const ports = await freePorts(12);
    expect(new Set(ports).size).toBe(12);
    for (const p of ports) {
      expect(p).toBeGreaterThanOrEqual(20_000);
      expect(p).toBeLessThan(32_768);
      expect(await portIsFree(p)).toBe(true);
    }
  });
});
