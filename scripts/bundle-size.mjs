// What a module costs an app that bundles it: esbuild's minified bundle for Node, its gzip size, and the bytes per package.
// Used by the bench's footprint section and by scripts/check-bundle-size.mjs (the CI budget).
import { createRequire } from 'node:module'
import path from 'node:path'
import { gzipSync } from 'node:zlib'

const require = createRequire(import.meta.url)
const root = path.join(import.meta.dirname, '..')

/** Peers an app brings itself: bundling them would charge a framework to its body parser. */
export const PEERS = ['koa', 'hono', 'h3', '@nestjs/*', 'rxjs', 'reflect-metadata']

const WRAPPER = 'footprint-entry.js'

/** The package a bundled file belongs to: the folder after its last node_modules, else bodykit (dist/) or a path relative to the repo. */
function packageOf (file) {
  if (file === WRAPPER) return '(entry)'
  const parts = file.split('/')
  const at = parts.lastIndexOf('node_modules')
  if (at === -1) return file.startsWith('dist/') ? 'bodykit' : file
  return parts[at + 1].startsWith('@') ? parts[at + 1] + '/' + parts[at + 2] : parts[at + 1]
}

/**
 * Bundles `specifierOrPath` as an app's `require()` of it would pull it in (platform node, minified, CommonJS).
 * @param {string} specifierOrPath a package name (resolved from `resolveDir`) or an absolute file path
 * @param {{ external?: string[], resolveDir?: string }} [options] `external` defaults to PEERS; `resolveDir` to the repo root
 * @returns {Promise<{ minified: number, gzip: number, inputs: Record<string, number> }>} bytes, and minified bytes per package, largest first
 */
export async function bundleEntry (specifierOrPath, { external = PEERS, resolveDir = root } = {}) {
  // esbuild is a devDependency: loaded here so that importing this module costs nothing until it bundles.
  const esbuild = require('esbuild')
  const result = await esbuild.build({
    // module.exports keeps the whole module: a bare require() of a package marked sideEffects: false may be dropped.
    stdin: { contents: `module.exports = require(${JSON.stringify(specifierOrPath)})`, resolveDir, sourcefile: WRAPPER },
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'cjs',
    external,
    write: false,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: root
  })
  const code = result.outputFiles[0].contents
  const byPackage = {}
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [file, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name = packageOf(file)
      byPackage[name] = (byPackage[name] ?? 0) + bytesInOutput
    }
  }
  const inputs = Object.fromEntries(Object.entries(byPackage).filter(([, bytes]) => bytes > 0).sort((a, b) => b[1] - a[1]))
  return { minified: code.byteLength, gzip: gzipSync(code, { level: 9 }).byteLength, inputs }
}
