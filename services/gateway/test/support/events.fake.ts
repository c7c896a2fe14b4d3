/** The event log in memory: pages either way over `state.events` (hidden projects left out), slowed or cut as `state` says. */
import type { CallContext } from '@reelbase/lib-platform';
import type { eventsv1 } from '@reelbase/proto';
import type { FakeState, Track } from './fake.state.js';

export function fakeEvents(state: FakeState, track: Track) {
  const events = {
    listEvents: async (req: eventsv1.ListEventsRequest, ctx: CallContext) => {
      track('events', 'listEvents', req, ctx);
      if (state.eventsLatencyMs) await new Promise((r) => setTimeout(r, state.eventsLatencyMs));
      const lastId = state.events.at(-1)?.id ?? 0;
      const hidden = new Set(req.hiddenProjectIds ?? []);
      let items = state.events.filter(
        (e) =>
          (!req.entityType || e.entityType === req.entityType) &&
          (!req.projectId || e.projectId === req.projectId) &&
          (e.projectId === undefined || !hidden.has(e.projectId)),
      );
      items = req.after !== undefined ? items.filter((e) => e.id > req.after!) : items.filter((e) => req.before === undefined || e.id < req.before).reverse();
      const cap = Math.min(req.limit, state.eventsPageBudget ?? req.limit);
      const truncated = items.length > cap && cap < req.limit;
      return { items: items.slice(0, cap), lastId, truncated };
    },
  };
  return events;
}
