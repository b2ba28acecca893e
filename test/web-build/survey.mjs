// Issue 44's survey: what the Web readers (readJson(request)…) and bodykit/hono bundle to for a browser platform.
// Usage: node test/web-build/survey.mjs [entry]   reads src/ through esbuild (no build needed); entry is one of
// `readers`, `hono`, `readers+hono` (default: all three). Prints, per entry: the minified and gzip size; every Node
// built-in left unresolved, or met only by an npm polyfill of its name (buffer, events), with who imports it and how;
// the bytes of each src/ module with the built-ins and npm packages it imports; per npm package its own minified bytes
// and what removing it (with whatever only it pulls in) saves. Not a test: test/web-build/PLAN.md quotes its output.
import { builtinModules } from 'node:module'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import * as esbuild from 'esbuild'

const root = path.resolve(import.meta.dirname, '../..')
const READERS = "export { readJson, readRaw, readText, readUrlencoded, readMultipart } from './src/readers'"
const HONO = "export * from './src/hono.mts'"
const ENTRIES = { readers: READERS, hono: HONO, 'readers+hono': `${READERS}\n${HONO}` }
/** Peers the app brings (as scripts/bundle-size.mjs counts them). */
const PEERS = /^(hono)(\/|$)/
const BUILTINS = new Set(builtinModules)
const KIB = 1024

function isBuiltin (specifier) {
  const bare = specifier.startsWith('node:') ? specifier.slice(5) : specifier
  return BUILTINS.has(bare) || BUILTINS.has(bare.split('/')[0])
}

/** The npm package a bundled file belongs to, or null for the repo's own files. */
function packageOf (file) {
  const parts = file.split('/')
  const at = parts.lastIndexOf('node_modules')
  if (at === -1) return null
  return parts[at + 1].startsWith('@') ? `${parts[at + 1]}/${parts[at + 2]}` : parts[at + 1]
}

/**
 * Bundles an entry as a browser app would (esbuild, platform browser, minified ESM). A Node built-in the bundler
 * cannot resolve (after the packages' `browser` fields) is recorded and left external instead of failing the build.
 * @param {string} contents the entry module
 * @param {string | null} emptied an npm package whose files are replaced by empty modules (its cost, measured by removal),
 *   or `*` for every package (what bodykit's own code costs)
 */
async function bundle (contents, emptied = null) {
  const unresolved = []
  const plugin = {
    name: 'survey',
    setup (build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === 'survey') return undefined
        if (PEERS.test(args.path)) return { path: args.path, external: true }
        if (!isBuiltin(args.path)) return undefined
        // A built-in a package's `browser` field maps (to false or a file) resolves: esbuild handles it as usual.
        const result = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'survey' })
        const builtin = args.path.replace(/^node:/, '')
        // An npm package of the built-in's name (buffer, events… some devDependency brought them) is a polyfill: counted as unresolved.
        const polyfill = result.errors.length === 0 && packageOf(result.path) === builtin
        if (result.errors.length === 0 && !polyfill) return undefined
        unresolved.push({ builtin, importer: path.relative(root, args.importer), kind: args.kind })
        return { path: args.path, external: true }
      })
      if (emptied !== null) {
        build.onLoad({ filter: /node_modules/ }, (args) => emptied === '*' || packageOf(args.path) === emptied ? { contents: 'module.exports = {}', loader: 'js' } : undefined)
      }
    }
  }
  const result = await esbuild.build({
    stdin: { contents, resolveDir: root, sourcefile: 'survey-entry.ts', loader: 'ts' },
    bundle: true,
    minify: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: root,
    plugins: [plugin]
  })
  const code = result.outputFiles[0].contents
  return { minified: code.byteLength, gzip: gzipSync(code, { level: 9 }).byteLength, metafile: result.metafile, unresolved }
}

const kib = (bytes) => (bytes / KIB).toFixed(1)

async function survey (entry) {
  const full = await bundle(ENTRIES[entry])
  console.log(`\n## ${entry}: ${kib(full.minified)} KiB minified, ${kib(full.gzip)} KiB gzip (esbuild ${esbuild.version}, platform browser)`)

  const byBuiltin = new Map()
  for (const { builtin, importer, kind } of full.unresolved) {
    const list = byBuiltin.get(builtin) ?? new Set()
    list.add(`${importer}${kind === 'require-call' ? ' (require)' : ''}`)
    byBuiltin.set(builtin, list)
  }
  console.log(`\nUnresolved Node built-ins (${byBuiltin.size}):`)
  for (const [builtin, importers] of [...byBuiltin].sort()) console.log(`- ${builtin}: ${[...importers].sort().join(', ')}`)

  const output = Object.values(full.metafile.outputs)[0]
  console.log('\nsrc/ modules (minified bytes in output; built-ins; npm packages):')
  for (const [file, input] of Object.entries(full.metafile.inputs).sort()) {
    if (!file.startsWith('src/')) continue
    const builtins = [...new Set(full.unresolved.filter((u) => u.importer === file).map((u) => u.builtin))]
    const packages = [...new Set(input.imports.map((i) => packageOf(i.path)).filter((p) => p !== null))]
    console.log(`- ${file} ${output.inputs[file]?.bytesInOutput ?? 0}; ${builtins.join(' ') || '-'}; ${packages.join(' ') || '-'}`)
  }

  const own = new Map()
  for (const [file, { bytesInOutput }] of Object.entries(output.inputs)) {
    const name = packageOf(file) ?? (file.startsWith('src/') ? '(bodykit src/)' : '(other)')
    own.set(name, (own.get(name) ?? 0) + bytesInOutput)
  }
  console.log('\nPer package: own minified KiB | removing it (and what only it pulls in) saves: minified KiB, gzip KiB')
  for (const [name, bytes] of [...own].sort((a, b) => b[1] - a[1])) {
    if (name === '(bodykit src/)') {
      const alone = await bundle(ENTRIES[entry], '*')
      console.log(`- ${name} ${kib(bytes)} | alone (every package emptied): ${kib(alone.minified)} KiB minified, ${kib(alone.gzip)} KiB gzip`)
      continue
    }
    if (name.startsWith('(')) {
      console.log(`- ${name} ${kib(bytes)}`)
      continue
    }
    const without = await bundle(ENTRIES[entry], name)
    console.log(`- ${name} ${kib(bytes)} | ${kib(full.minified - without.minified)}, ${kib(full.gzip - without.gzip)}`)
  }
}

const wanted = process.argv[2] ? [process.argv[2]] : Object.keys(ENTRIES)
for (const name of wanted) {
  if (!(name in ENTRIES)) throw new TypeError(`unknown entry ${name}: one of ${Object.keys(ENTRIES).join(', ')}`)
  await survey(name)
}
