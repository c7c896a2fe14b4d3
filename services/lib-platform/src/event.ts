/**
 * The event as clients see it (contract section 4): published live on `live.events` by the
 * events service, returned by GET /events and sent on the WebSocket by the gateway.
 */
export interface ContractEvent {
  /** Global, gapless, increasing. */
  id: number;
  entity_type: string;
  entity_id: string;
  project_id: string | null;
  /** create, update or delete. */
  action: string;
  /** Acting user id; null for a guest's write. */
  actor: string | null;
  changes: Record<string, unknown>;
  created_at: string;
}
