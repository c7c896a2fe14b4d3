/** The peers the schema service serves (schema, addons, actions, scheduler): canned JSON answers, every call tracked. */
import { AppError, type CallContext } from '@reelbase/lib-platform';
import { addonsv1, schemav1 } from '@reelbase/proto';
import type { FakeState, Track } from './fake.state.js';

export function fakeSchema(state: FakeState, track: Track) {
  // Every schema RPC answers JSON: a canned answer, or an echo of what it was asked.
  const schema: Record<string, (req: unknown, ctx: CallContext) => Promise<schemav1.JsonResult>> = {};
  for (const method of Object.keys(schemav1.SchemaServiceService)) {
    schema[method] = async (req, ctx) => {
      track('schema', method, req, ctx);
      return { json: state.schemaAnswers?.get(method) ?? JSON.stringify({ rpc: method, request: req }) };
    };
  }
  return schema;
}

export function fakeAddons(track: Track) {
  // Every addons RPC echoes what it was asked (the rules live in the schema service).
  const addons: Record<string, (req: unknown, ctx: CallContext) => Promise<addonsv1.AddonJson>> = {};
  for (const method of Object.keys(addonsv1.AddonsServiceService)) {
    addons[method] = async (req, ctx) => {
      track('addons', method, req, ctx);
      return { json: JSON.stringify({ rpc: method, request: req }) };
    };
  }
  return addons;
}

export function fakeActions(track: Track) {
  // The schema service's ActionsService: answers canned JSON (the rules are the service's).
  const actions = {
    listActions: async (req: unknown, ctx: CallContext) => {
      track('actions', 'listActions', req, ctx);
      return { json: JSON.stringify({ items: [{ id: 'launch:maya', kind: 'launch', label: 'Maya', app: 'maya', variant: '2025', order: 0 }] }) };
    },
    executeAction: async (req: { actionId: string }, ctx: CallContext) => {
      track('actions', 'executeAction', req, ctx);
      const out = req.actionId.startsWith('launch:')
        ? { kind: 'launch', token: 'tok/en+1', expires_at: '2026-01-01T00:10:00.000000Z' }
        : { kind: 'webhook', delivery_id: '0190a0b0-0000-7000-8000-0000000000a1' };
      return { json: JSON.stringify(out) };
    },
    takeLaunch: async (req: unknown, ctx: CallContext) => {
      track('actions', 'takeLaunch', req, ctx);
      throw AppError.notFound('no such launch request');
    },
    getCustomActions: async (req: unknown, ctx: CallContext) => {
      track('actions', 'getCustomActions', req, ctx);
      return { json: '{"actions":[]}' };
    },
    putCustomActions: async (req: { bodyJson: string }, ctx: CallContext) => {
      track('actions', 'putCustomActions', req, ctx);
      return { json: req.bodyJson };
    },
  };
  return actions;
}

export function fakeScheduler(state: FakeState, track: Track) {
  // The scheduler (served by schema): canned answers, every call tracked.
  const scheduler = new Proxy(
    {},
    {
      get: (_t, method: string) => async (req: unknown, ctx: CallContext) => {
        track('scheduler', method, req, ctx);
        return { json: state.schedulerAnswers?.get(method) ?? JSON.stringify({ rpc: method, request: req }) };
      },
    },
  );
  return scheduler;
}
