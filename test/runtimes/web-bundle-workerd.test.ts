// The Web bundle in workerd without nodejs_compat (its DecompressionStream: gzip and deflate): the cases, the hostile bodies
// and the fuzz corpora over HTTP answer as the Node build does, and the Hono-on-Workers recipe runs.
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { bundleEntry, install, startWorkerd, writeBundle } from './web-bundle/harness'
import { runtimeSuite } from './web-bundle/suite'

runtimeSuite('workerd')

describe('recipe: Hono on Workers (test/runtimes/recipes/hono-worker.ts) in workerd without nodejs_compat', () => {
  let server: { port: number, child: ChildProcess, output: () => string } | null = null
  let skip: string | null = null
  let folder = ''
  before(async () => {
    const installed = await install('workerd')
    if ('skip' in installed) { skip = installed.skip; return }
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-web-hono-'))
    await writeBundle(folder)
    // hono is bundled in, as wrangler would; the Web bundle stays a module of its own beside it.
    await bundleEntry(folder, path.join(__dirname, 'recipes/hono-worker.ts'), 'worker.js', { format: 'esm', inlineBundle: false })
    server = await startWorkerd(installed, folder, ['worker.js', 'web.mjs'])
  })
  after(() => {
    server?.child.kill('SIGKILL')
    if (folder !== '') fs.rmSync(folder, { recursive: true, force: true })
  })

  const post = async (headers: Record<string, string>, body: Uint8Array | string): Promise<{ status: number, json: unknown }> => {
    const response = await fetch(`http://127.0.0.1:${server?.port}/echo`, { method: 'POST', headers, body })
    return { status: response.status, json: await response.json() }
  }
  const cases: Array<[string, Record<string, string>, Uint8Array | string, { status: number, json: unknown }]> = [
    ['JSON', { 'content-type': 'application/json' }, '{"a":[1,"\u00e9"]}', { status: 200, json: { received: { a: [1, '\u00e9'] } } }],
    ['JSON that does not parse', { 'content-type': 'application/json' }, '{"a":', { status: 400, json: { error: 'entity.parse.failed' } }],
    ['JSON over 100kb', { 'content-type': 'application/json' }, JSON.stringify({ pad: 'x'.repeat(110_000) }), { status: 413, json: { error: 'entity.too.large' } }],
    ['a charset the JSON parser refuses', { 'content-type': 'application/json; charset=latin1' }, '{}', { status: 415, json: { error: 'charset.unsupported' } }],
    ['another type', { 'content-type': 'text/plain' }, 'hi', { status: 200, json: {} }]
  ]
  for (const [name, headers, body, expected] of cases) {
    it(name, async (t) => {
      if (skip !== null) return t.skip(skip)
      assert.deepEqual(await post(headers, body), expected, server?.output().slice(-2000))
    })
  }
})
