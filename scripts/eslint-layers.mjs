// The ESLint rule `reelbase/layers`: which module may import which (docs/architecture.md, "Layers").
//
//   - a library (services/lib-*) never imports a service package, by name or by relative path;
//   - a service never imports another service;
//   - code under services/<service>/src/domain/ never imports that service's store/, grpc/ or http/
//     adapters, the generated protobuf code (@reelbase/proto), the ORM or the SQL driver
//     (@mikro-orm/*, knex, pg) or the gRPC transport (@grpc/*). Its tests (*.spec.ts) may, to wire
//     real adapters.
//
// Relative specifiers are resolved against the importing file, so `../store/x.js` and
// `../../../records/src/y.js` are judged by where they land, not by how they are spelled. Checked:
// import and export ... from declarations, import() with a literal, require() of a literal.
import { dirname, relative, resolve, sep } from 'node:path';

const LIB_PREFIX = 'lib-';
const ADAPTER_DIRS = ['store', 'grpc', 'http'];
const DOMAIN_FORBIDDEN_PACKAGES = [/^@reelbase\/proto(\/|$)/, /^@mikro-orm\//, /^knex(\/|$)/, /^pg(\/|$)/, /^@grpc\//];

/** Where a file sits: `{ pkg, inSrc, layer }` for files under services/<pkg>/, else null. */
function locate(root, file) {
  const rel = relative(root, file).split(sep);
  if (rel[0] !== 'services' || rel.length < 3) return null;
  const pkg = rel[1];
  const inSrc = rel[2] === 'src';
  // src/<layer>/... or src/<layer>.ts
  const layer = inSrc && rel.length >= 4 ? rel[3].replace(/\.[cm]?[jt]s$/, '') : null;
  return { pkg, inSrc, layer };
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
      domainImportsPackage: 'Domain code must not import {{to}}: keep generated protobuf types, the ORM, SQL and gRPC in the adapters.',
    },
  },
  create(context) {
    const { root, packages } = context.options[0];
    const servicePackages = new Set(packages);
    const file = context.physicalFilename ?? context.filename;
    const here = locate(root, file);
    if (!here) return {};
    const inDomain = here.layer === 'domain' && !/\.spec\.[cm]?[jt]s$/.test(file);

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
          if (DOMAIN_FORBIDDEN_PACKAGES.some((re) => re.test(spec))) {
            context.report({ node, messageId: 'domainImportsPackage', data: { to: spec } });
          }
          return;
        }
      }
      if (!target || !servicePackages.has(target.pkg)) return;
      if (target.pkg !== here.pkg && !isLib(target.pkg)) {
        const messageId = isLib(here.pkg) ? 'libImportsService' : 'serviceImportsService';
        context.report({ node, messageId, data: { from: here.pkg, to: target.pkg } });
        return;
      }
      if (inDomain && target.pkg === here.pkg && target.inSrc && ADAPTER_DIRS.includes(target.layer)) {
        context.report({ node, messageId: 'domainImportsAdapter', data: { to: target.layer } });
      }
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
