// A bundle of src/ keeps only the dependencies its imports use: the loaders of src/dependencies.ts are pure, so
// importing one does not bring every package the others name, and the heaviest have a module each (src/packages/).
import assert from 'node:assert/strict'
import path from 'node:path'
import { describe, it } from 'node:test'
import * as esbuild from 'esbuild'

const root = path.resolve(__dirname, '../..')

/** The npm packages in a browser-platform bundle of `contents` (Node built-ins left out). */
async function packagesIn (contents: string): Promise<string[]> {
  const result = await esbuild.build({
    stdin: { contents, resolveDir: root, loader: 'ts' },
    bundle: true,
    write: false,
    metafile: true,
    platform: 'browser',
    format: 'esm',
    logLevel: 'silent',
    plugins: [{ name: 'builtins', setup (build) { build.onResolve({ filter: /^(node:)?[a-z_]+$/ }, (args) => ['crypto', 'stream', 'zlib', 'util', 'events', 'buffer', 'path', 'os', 'fs', 'http', 'http2', 'querystring', 'string_decoder', 'async_hooks', 'tty', 'net'].includes(args.path.replace(/^node:/, '')) ? { path: args.path, external: true } : undefined) } }]
  })
  const names = new Set<string>()
  // The files whose bytes are in the output (the metafile's inputs also list files parsed and then shaken out).
  const kept = Object.values(result.metafile.outputs).flatMap((output) => Object.entries(output.inputs).filter(([, use]) => use.bytesInOutput > 0).map(([file]) => file))
  for (const input of kept) {
    const at = input.lastIndexOf('node_modules/')
    if (at === -1) continue
    const rest = input.slice(at + 'node_modules/'.length).split('/')
    names.add(rest[0].startsWith('@') ? rest[0] + '/' + rest[1] : rest[0])
  }
  return [...names].sort()
}

describe('src/dependencies.ts in a bundle', () => {
  it('one loader imported: only its package is bundled', async () => {
    assert.deepEqual(await packagesIn("import { loadCrypto } from './src/dependencies'; console.log(loadCrypto())"), [])
    assert.ok((await packagesIn("import { loadQs } from './src/packages/qs'; console.log(loadQs())")).includes('qs'))
    assert.deepEqual(await packagesIn("import { loadSecureJsonParse } from './src/packages/secure-json-parse'; console.log(loadSecureJsonParse())"), ['secure-json-parse'])
  })

  it('createLog alone bundles debug and no loader\'s package', async () => {
    const packages = await packagesIn("import { createLog } from './src/dependencies'; console.log(createLog('x'))")
    assert.ok(packages.includes('debug'), packages.join(', '))
    for (const name of ['qs', 'type-is', 'busboy', 'content-type', 'on-finished', 'secure-json-parse']) assert.ok(!packages.includes(name), `${name} in ${packages.join(', ')}`)
  })
})
