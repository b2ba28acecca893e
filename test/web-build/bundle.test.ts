// The Web build bundles for a browser platform with no Node built-in, and the bundle reads a body where Node's globals are gone.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import vm from 'node:vm'
import * as esbuild from 'esbuild'
import { bundleWeb } from '../../scripts/web-bundle.mjs'

describe('bodykit/web as a browser bundle', () => {
  it('imports no Node built-in once tree shaking is done (the size budget is scripts/check-bundle-size.mjs\'s)', async () => {
    const { builtins, minified, gzip } = await bundleWeb('src/web.ts')
    assert.deepEqual(builtins, [])
    console.log('# src/web.ts for a browser: %s KiB minified, %s KiB gzip', (minified / 1024).toFixed(1), (gzip / 1024).toFixed(1))
  })

  it('reads a JSON body in a context with Web globals only (no Buffer, process, require)', async () => {
    const { code } = await bundleWeb('src/web.ts', { minify: false })
    const globals = { Request, Response, ReadableStream, WritableStream, TransformStream, TextDecoder, TextEncoder, DecompressionStream, queueMicrotask, URL, Headers, console }
    // The module's exports as a script's: esbuild rewrites `export` only (the bundle has no import to rewrite).
    const script = (await esbuild.transform(code, { format: 'cjs' })).code
    const exported = { exports: {} as Record<string, unknown> }
    vm.runInContext(script, vm.createContext({ ...globals, module: exported, exports: exported.exports }))
    const { readJson } = exported.exports as { readJson: (request: Request) => Promise<unknown> }
    const request = new Request('http://127.0.0.1/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":[1,"é"]}' })
    // Made in the context: its prototypes are the context's, so compared as JSON.
    assert.equal(JSON.stringify(await readJson(request)), '{"a":[1,"é"]}')
  })
})
