/**
 * JSON with object keys sorted at every level, so two spellings of one value are one text: what
 * the gateway hashes for an Idempotency-Key's body and the schema service for a digest or a
 * repeated PUT. Keys whose value is undefined are left out, as JSON.stringify does.
 */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
