/**
 * The addons' requests and answers (docs/api-notes.md, "Addons") between the REST JSON and the
 * schema service's AddonsService. A version's and a settings layer's bodies are free-form and go
 * as JSON text; PATCH and pin add their typed fields; answers are read from their typed messages
 * (the deprecated `json` from a service of the previous release; docs/architecture.md, "Protocol
 * buffers").
 */
import { addonsCodec as codec, type JsonObject } from '@reelbase/lib-platform';
import type { addonsv1 } from '@reelbase/proto';
import { answerText } from './answer.json.js';

/** The path and query an AddonBody request names. */
export interface AddonTarget {
  name: string;
  version?: string;
  projectId?: string | undefined;
}

/** A request with a free-form JSON body (a version, a settings layer). */
export function addonBodyRequest(at: AddonTarget, body: unknown): addonsv1.AddonBody {
  return { name: at.name, version: at.version ?? '', ...(at.projectId === undefined ? {} : { projectId: at.projectId }), bodyJson: JSON.stringify(body) };
}

/** PATCH /addons/{name} or PUT /addons/{name}/pin: the body as JSON and as its typed fields. */
export function addonTypedBodyRequest(route: 'production' | 'pin', at: AddonTarget, body: JsonObject): addonsv1.AddonBody {
  return { ...addonBodyRequest(at, body), ...codec.addonBodyFieldsToProto(route, body) };
}

/** Every AddonsService answer as JSON text. */
export const addonText = (res: addonsv1.AddonJson): string => answerText(res.answer, codec.addonAnswerFromProto, res.json);
