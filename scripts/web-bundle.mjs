// Bundles the Web build (src/web.ts, or another src/ module) as a browser app would: esbuild, platform browser, minified ESM, with every Node built-in it meets recorded.
// Used by test/web-build/bundle.test.ts (no built-in), scripts/check-bundle-size.mjs (the size budget) and the runtime tests (the code edge runtimes run).
import { builtinModules } from 'node:module'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import * as esbuild from 'esbuild'

const root = path.resolve(import.meta.dirname, '..')
const BUILTINS = new Set(builtinModules)
/** Peers the app brings. */
const PEERS = /^(hono|h3)(\/|$)/

function isBuiltin (specifier) {
  const bare = specifier.startsWith('node:') ? specifier.slice(5) : specifier
  return BUILTINS.has(bare) || BUILTINS.has(bare.split('/')[0])
}

/** The npm package a bundled file belongs to, or null for the repo's own files. */
function packageOf (file) {
  const parts = file.split(path.sep)
  const at = parts.lastIndexOf('node_modules')
  if (at === -1) return null
  return parts[at + 1].startsWith('@') ? `${parts[at + 1]}/${parts[at + 2]}` : parts[at + 1]
}

/**
 * Bundles `entry` (a path from the repository's root) for a browser platform. A Node built-in that stays unresolved
 * after the packages' `browser` fields, or resolves only to an npm polyfill of its name, is left external: `builtins`
 * lists those the bundle still imports once tree shaking is done (a module that imports one but is left out does not count).
 * `webAs`: the module src/web.ts is imported as, left external (dist/hono-web.mjs imports dist/web.mjs instead of a second copy).
 * @returns {Promise<{ code: string, minified: number, gzip: number, builtins: string[] }>}
 */
export async function bundleWeb (entry = 'src/web.ts', { minify = true, webAs = null } = {}) {
  const plugin = {
    name: 'web-build',
    setup (build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === 'web-build') return undefined
        if (PEERS.test(args.path)) return { path: args.path, external: true }
        if (webAs !== null && path.join(args.resolveDir, args.path) === path.join(root, 'src/web')) return { path: webAs, external: true }
        if (!isBuiltin(args.path)) return undefined
        const result = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'web-build' })
        const builtin = args.path.replace(/^node:/, '')
        const polyfill = result.errors.length === 0 && packageOf(result.path) === builtin
        if (result.errors.length === 0 && !polyfill) return undefined
        return { path: builtin, external: true }
      })
    }
  }
  const result = await esbuild.build({
    entryPoints: [path.join(root, entry)],
    bundle: true,
    minify,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: root,
    plugins: [plugin]
  })
  const bytes = result.outputFiles[0].contents
  const [output] = Object.values(result.metafile.outputs)
  const builtins = output.imports.filter((imported) => imported.external && isBuiltin(imported.path)).map((imported) => imported.path)
  return { code: result.outputFiles[0].text, minified: bytes.byteLength, gzip: gzipSync(bytes, { level: 9 }).byteLength, builtins }
}
