/**
 * The schema snapshot records validates against (docs/architecture.md, "Records obey the schema"): the JSON the
 * schema service sends with ApplySchema after every committed definition change, and its
 * compiled form (maps by code) that the validator reads on every write.
 */
import type { FieldType } from '@reelbase/lib-platform';

export interface SnapshotField {
  code: string;
  type: FieldType;
  options?: { code: string }[];
  link_types?: string[];
  required?: boolean;
  default?: unknown;
}

export interface SnapshotEntityType {
  code: string;
  project_scoped: boolean;
  builtin?: boolean;
  fields: SnapshotField[];
}

export interface SnapshotTransition {
  from: string;
  to: string[];
  roles?: string[];
}

export interface SnapshotTaskTemplate {
  code: string;
  entity_type: string;
  tasks: { name: string; step: string; estimate_minutes?: number | null }[];
}

/** The snapshot JSON as ApplySchema carries it. */
export interface SchemaSnapshot {
  version: number;
  entity_types: SnapshotEntityType[];
  statuses: { code: string; entity_types?: string[] }[];
  steps: { code: string }[];
  priorities: { code: string }[];
  transitions?: Record<string, SnapshotTransition[]>;
  task_templates?: SnapshotTaskTemplate[];
}

export interface CompiledField {
  code: string;
  type: FieldType;
  options: ReadonlySet<string>;
  /** Empty: a link may point at a record of any type. */
  linkTypes: ReadonlySet<string>;
  required: boolean;
  hasDefault: boolean;
  default: unknown;
}

export interface CompiledEntityType {
  code: string;
  projectScoped: boolean;
  fields: ReadonlyMap<string, CompiledField>;
}

/** A snapshot ready for validation; version 0 is "no schema yet": everything is accepted. */
export interface CompiledSchema {
  version: number;
  entityTypes: ReadonlyMap<string, CompiledEntityType>;
  /** Status code → the types it is scoped to (empty: every type). */
  statuses: ReadonlyMap<string, ReadonlySet<string>>;
  steps: ReadonlySet<string>;
  priorities: ReadonlySet<string>;
  /** Type → its transitions; a type that is absent (or has none) allows every change. */
  transitions: ReadonlyMap<string, readonly SnapshotTransition[]>;
  taskTemplates: ReadonlyMap<string, SnapshotTaskTemplate>;
}

/** The schema before any snapshot was applied. */
export const NO_SCHEMA: CompiledSchema = {
  version: 0,
  entityTypes: new Map(),
  statuses: new Map(),
  steps: new Set(),
  priorities: new Set(),
  transitions: new Map(),
  taskTemplates: new Map(),
};

const list = <T>(v: T[] | undefined | null): T[] => (Array.isArray(v) ? v : []);

/** Compiles a snapshot; `version` is the one stored beside it (authoritative over the JSON's). */
export function compileSchema(version: number, snapshot: SchemaSnapshot): CompiledSchema {
  if (version <= 0) return NO_SCHEMA;
  const entityTypes = new Map<string, CompiledEntityType>();
  for (const t of list(snapshot.entity_types)) {
    const fields = new Map<string, CompiledField>();
    for (const f of list(t.fields)) {
      fields.set(f.code, {
        code: f.code,
        type: f.type,
        options: new Set(list(f.options).map((o) => o.code)),
        linkTypes: new Set(list(f.link_types)),
        required: f.required === true,
        hasDefault: f.default !== undefined && f.default !== null,
        default: f.default,
      });
    }
    entityTypes.set(t.code, { code: t.code, projectScoped: t.project_scoped !== false, fields });
  }
  const transitions = new Map<string, SnapshotTransition[]>();
  for (const [type, rules] of Object.entries(snapshot.transitions ?? {})) {
    if (list(rules).length > 0) transitions.set(type, list(rules));
  }
  return {
    version,
    entityTypes,
    statuses: new Map(list(snapshot.statuses).map((s) => [s.code, new Set(list(s.entity_types))])),
    steps: new Set(list(snapshot.steps).map((s) => s.code)),
    priorities: new Set(list(snapshot.priorities).map((p) => p.code)),
    transitions,
    taskTemplates: new Map(list(snapshot.task_templates).map((t) => [t.code, t])),
  };
}

/** The schema a records process holds in memory, reloaded when a write sees a newer version. */
export class SchemaCache {
  private current: CompiledSchema | undefined;
  private loading: Promise<CompiledSchema> | undefined;

  constructor(private readonly load: () => Promise<{ version: number; snapshot: SchemaSnapshot } | undefined>) {}

  /**
   * The compiled schema of `version` (the stored one a write just read); reloaded from the store
   * when the cached one differs. What the store holds becomes the cached schema: a slower load of
   * an older version may briefly replace a newer one, which the next write notices and reloads.
   */
  async at(version: number, load = this.load): Promise<CompiledSchema> {
    if (this.current && this.current.version === version) return this.current;
    if (version === 0) {
      this.current = NO_SCHEMA;
      return NO_SCHEMA;
    }
    const loaded = await load();
    const compiled = loaded ? compileSchema(loaded.version, loaded.snapshot) : NO_SCHEMA;
    this.current = compiled;
    return compiled;
  }

  /** The schema held now (loaded once on first use); may be stale: writes confirm its version. */
  async held(): Promise<CompiledSchema> {
    if (this.current) return this.current;
    this.loading ??= this.load().then(
      (loaded) => {
        this.current ??= loaded ? compileSchema(loaded.version, loaded.snapshot) : NO_SCHEMA;
        this.loading = undefined;
        return this.current;
      },
      (err: unknown) => {
        this.loading = undefined;
        throw err;
      },
    );
    return this.loading;
  }
}
