// kubernetes-models for scripts/helm-check.mjs (optional): the model class of a rendered object, when installed.
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export async function importModule(spec) {
  try {
    return await import(spec);
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' && err?.code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw err;
    const parts = spec.split('/');
    const pkg = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
    const sub = parts.slice(pkg.split('/').length).join('/');
    for (const dir of (process.env.NODE_PATH ?? '').split(delimiter).filter(Boolean)) {
      const manifestPath = join(dir, pkg, 'package.json');
      if (!existsSync(manifestPath)) continue;
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
      const target = manifest.exports?.[sub ? `./${sub}` : '.'];
      const file = typeof target === 'string' ? target : (target?.import ?? target?.default);
      if (file) return import(pathToFileURL(join(dir, pkg, file)).href);
    }
    return null;
  }
}

function modelModuleFor(apiVersion) {
  if (apiVersion.startsWith('monitoring.coreos.com/')) return `@kubernetes-models/prometheus-operator/${apiVersion}`;
  return `kubernetes-models/${apiVersion}`;
}

const modelCache = new Map();
export async function modelFor(apiVersion, kind) {
  const spec = modelModuleFor(apiVersion);
  if (!modelCache.has(spec)) modelCache.set(spec, await importModule(spec).catch(() => null));
  const mod = modelCache.get(spec);
  return mod && typeof mod[kind] === 'function' ? mod[kind] : null;
}
