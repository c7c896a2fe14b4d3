/**
 * Probe bodies.
 */
import { z } from 'zod';

export const HealthOut = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });

const Checks = z.record(z.string(), z.string()).describe('"ok" or why the dependency failed, by name.');

export const ReadyOut = z.object({ status: z.literal('ready'), checks: Checks }).meta({ id: 'Ready' });

export const NotReadyOut = z.object({ detail: z.string(), code: z.literal('unavailable'), checks: Checks }).meta({ id: 'NotReady' });
