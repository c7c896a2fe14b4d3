// The ESLint rule `reelbase/layers`: which module may import which (docs/architecture.md, "Layers").
//
//   - a library (services/lib-*) never imports a service package, by name or by relative path;
//   - a service never imports another service;
//   - code under services/<service>/src/domain/ imports only: domain code of its own service, the
//     libraries (@reelbase/lib-*), node builtins and third-party libraries that do no I/O of their own
//     (zod, jose, uuid, ...). Never the service's adapters or any other module of it outside domain/
//     (store/, grpc/, http/, live/, objects/, config.ts, ...: declare a port in domain/ports.ts and
//     implement it there), the generated protobuf code (@reelbase/proto), the ORM or the SQL driver
//     (@mikro-orm/*, knex, pg), the gRPC transport (@grpc/*) or the clients of NATS, the object
//     store, HTTP and WebSockets;
//   - a gRPC handler (services/<service>/src/grpc/) never imports the service's store/ adapters, the
//     ORM or the SQL driver: it maps protobuf to domain calls and back.
//   - a flow (upload/, worker/, delivery/, ingest/, log/, loop/: what orchestrates the domain, such as an upload
//     or a transcode attempt) reaches storage and I/O through ports: it never imports an adapter folder
//     or a gRPC handler;
//   - an adapter (store/, objects/, transcode/, nats/, the gateway's live/ (NATS) and clients/, and
//     records/ or notifier/ holding another service's client) implements ports of the domain: it never imports another adapter folder, a flow
//     or a gRPC handler (the same one level down in a module);
//   Tests (*.spec.ts) may import anything of their own service, to wire real adapters.
//
// Relative specifiers are resolved against the importing file, so `../store/x.js` and
// `../../../records/src/y.js` are judged by where they land, not by how they are spelled. Checked:
// import and export ... from declarations, import() with a literal, require() of a literal.
import { dirname, relative, resolve, sep } from 'node:path';

const LIB_PREFIX = 'lib-';
const ADAPTER_DIRS = ['store', 'grpc', 'http'];
const STORAGE_PACKAGES = [/^@mikro-orm\//, /^knex(\/|$)/, /^pg(\/|$)/];
const DOMAIN_FORBIDDEN_PACKAGES = [
  /^@reelbase\/proto(\/|$)/,
  ...STORAGE_PACKAGES,
  /^@grpc\//,
  /^@nats-io\//,
  /^nats(\/|$)/,
  /^minio(\/|$)/,
  /^express(\/|$)/,
  /^ws(\/|$)/,
  /^busboy(\/|$)/,
];

/** The folders that are layers, at src/<layer>/ or src/<module>/<layer>/. */
const LAYERS = ['domain', 'store', 'grpc'];
/** Folders of flows: they orchestrate the domain and reach I/O through its ports. */
const FLOWS = ['upload', 'worker', 'delivery', 'ingest', 'log', 'loop'];
/** Folders of adapters: each implements ports for one kind of I/O (PostgreSQL, objects, a process, NATS, another service). */
const ADAPTERS = ['store', 'objects', 'transcode', 'nats', 'records', 'notifier', 'live', 'clients'];
const FOLDERS = [...new Set([...LAYERS, ...FLOWS, ...ADAPTERS])];
/** The module every other module of a service may build on; it imports no other module. */
const KERNEL = 'kernel';

/**
 * Where a file sits: `{ pkg, inSrc, layer, module }` for files under services/<pkg>/, else null.
 * `layer` is src/<layer>/ or src/<module>/<layer>/ (a layer of LAYERS), else the first folder or
 * file under src/; `module` is the module folder ('' outside modules).
 */
function locate(root, file) {
  const rel = relative(root, file).split(sep);
  if (rel[0] !== 'services' || rel.length < 3) return null;
  const pkg = rel[1];
  const inSrc = rel[2] === 'src';
  if (!inSrc || rel.length < 4) return { pkg, inSrc, layer: null, module: '' };
  const first = rel[3].replace(/\.[cm]?[jt]s$/, '');
  if (rel.length >= 6 && !FOLDERS.includes(first) && FOLDERS.includes(rel[4])) return { pkg, inSrc, layer: rel[4], module: first };
  return { pkg, inSrc, layer: first, module: '' };
}

const isLib = (pkg) => pkg.startsWith(LIB_PREFIX);

/** `@reelbase/<name>` → `<name>` (only for workspace packages under services/). */
function workspacePackage(spec, servicePackages) {
  const m = /^@reelbase\/([^/]+)/.exec(spec);
  return m && servicePackages.has(m[1]) ? m[1] : null;
}

/** @type {import('eslint').Rule.RuleModule} */
export const layersRule = {
  meta: {
    type: 'problem',
    docs: { description: 'Keeps domain code free of adapters and services free of each other (docs/architecture.md, "Layers").' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          packages: { type: 'array', items: { type: 'string' } },
        },
        required: ['root', 'packages'],
        additionalProperties: false,
      },
    ],
    messages: {
      libImportsService: 'A library ({{from}}) must not import the service {{to}}: move what both need into a lib-* package.',
      serviceImportsService: 'The service {{from}} must not import the service {{to}}: call it over gRPC or NATS, or share code through a lib-* package.',
      domainImportsAdapter: 'Domain code must not import the {{to}} adapter: declare a port in domain/ and implement it in {{to}}/.',
      domainImportsPackage: 'Domain code must not import {{to}}: keep generated protobuf types, the ORM, SQL, gRPC and I/O clients in the adapters.',
      domainImportsOutside: 'Domain code must not import {{to}}, which is outside domain/: declare a port in domain/ports.ts and implement it outside domain/.',
      handlerImportsStore: 'A gRPC handler must not import {{to}}: it calls the domain, which reaches storage through its ports.',
      moduleImportsAdapter:
        'The module {{from}} must not import the {{layer}} of the module {{to}}: call its domain, or move what both need into the kernel module.',
      flowImportsAdapter: 'A flow ({{from}}/) must not import {{to}}: it reaches I/O through a port of domain/, which service.ts wires to the adapter.',
      adapterImportsOther: 'An adapter ({{from}}/) must not import {{to}}: it implements ports of domain/ and depends on no other adapter, flow or handler.',
      kernelImportsModule: 'The kernel module must not import the module {{to}}: it holds what every module shares and depends on none of them.',
    },
  },
  create(context) {
    const { root, packages } = context.options[0];
    const servicePackages = new Set(packages);
    const file = context.physicalFilename ?? context.filename;
    const here = locate(root, file);
    if (!here) return {};
    const isSpec = /\.spec\.[cm]?[jt]s$/.test(file);
    const inDomain = here.layer === 'domain' && !isSpec;
    const inHandler = here.layer === 'grpc' && !isLib(here.pkg) && !isSpec;

    const report = (node, messageId, data) => context.report({ node, messageId, data });

    function check(node, spec) {
      if (typeof spec !== 'string') return;
      let target = null; // { pkg, layer } of the imported module, when it is ours
      if (spec.startsWith('.')) {
        const loc = locate(root, resolve(dirname(file), spec));
        if (loc) target = loc;
      } else {
        const pkg = workspacePackage(spec, servicePackages);
        if (pkg) target = { pkg, inSrc: false, layer: null };
        else if (inDomain) {
          if (DOMAIN_FORBIDDEN_PACKAGES.some((re) => re.test(spec))) report(node, 'domainImportsPackage', { to: spec });
          return;
        } else if (inHandler) {
          if (STORAGE_PACKAGES.some((re) => re.test(spec))) report(node, 'handlerImportsStore', { to: spec });
          return;
        }
      }
      if (!target || !servicePackages.has(target.pkg)) return;
      if (target.pkg !== here.pkg && !isLib(target.pkg)) {
        const messageId = isLib(here.pkg) ? 'libImportsService' : 'serviceImportsService';
        report(node, messageId, { from: here.pkg, to: target.pkg });
        return;
      }
      if (target.pkg !== here.pkg) return;
      if (!isSpec && here.module && target.module && target.module !== here.module) {
        if (here.module === KERNEL) report(node, 'kernelImportsModule', { to: target.module });
        else if (target.module !== KERNEL && target.layer !== 'domain' && here.layer !== null)
          report(node, 'moduleImportsAdapter', { from: here.module, to: target.module, layer: `${target.layer}/` });
      }
      if (inDomain && target.layer !== 'domain') {
        if (target.inSrc && ADAPTER_DIRS.includes(target.layer)) report(node, 'domainImportsAdapter', { to: target.layer });
        else report(node, 'domainImportsOutside', { to: spec });
      }
      if (inHandler && target.inSrc && target.layer === 'store') report(node, 'handlerImportsStore', { to: spec });
      if (isSpec || isLib(here.pkg) || !target.inSrc || target.layer === here.layer || target.module !== here.module) return;
      const crossed = ADAPTERS.includes(target.layer) || target.layer === 'grpc' || (ADAPTERS.includes(here.layer) && FLOWS.includes(target.layer));
      if (FLOWS.includes(here.layer) && crossed) report(node, 'flowImportsAdapter', { from: here.layer, to: spec });
      else if (ADAPTERS.includes(here.layer) && crossed) report(node, 'adapterImportsOther', { from: here.layer, to: spec });
    }

    const literal = (n) => (n && n.type === 'Literal' && typeof n.value === 'string' ? n.value : null);
    return {
      ImportDeclaration: (node) => check(node.source, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node.source, node.source.value),
      ExportAllDeclaration: (node) => check(node.source, node.source.value),
      ImportExpression: (node) => check(node.source, literal(node.source)),
      TSImportEqualsDeclaration: (node) =>
        node.moduleReference.type === 'TSExternalModuleReference' && check(node.moduleReference, literal(node.moduleReference.expression)),
      CallExpression: (node) => {
        if (node.callee.type === 'Identifier' && node.callee.name === 'require') check(node, literal(node.arguments[0]));
      },
    };
  },
};

export const layersPlugin = { meta: { name: 'reelbase' }, rules: { layers: layersRule } };
