// The Web bundle in Vercel's edge-runtime (no Buffer, process or DecompressionStream), in process: the cases, the hostile
// bodies and the fuzz corpora answer as the Node build does (compressed bodies: 415 there), and the Next.js edge route recipe runs.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import zlib from 'node:zlib'
import { bundleEntry, install, writeBundle } from './web-bundle/harness'
import { runtimeSuite } from './web-bundle/suite'

runtimeSuite('edge-runtime')

interface EdgeVm {
  evaluate: <T>(code: string) => T
  dispatchFetch: (url: string, init: { method: string, headers: Record<string, string>, body?: Uint8Array | string }) => Promise<Response>
}

describe('recipe: a Next.js edge route handler (test/runtimes/recipes/next-edge-route.ts) in edge-runtime', () => {
  let vm: EdgeVm | null = null
  let skip: string | null = null
  let folder = ''
  before(async () => {
    const installed = await install('edge-runtime')
    if ('skip' in installed) { skip = installed.skip; return }
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-web-next-'))
    await writeBundle(folder)
    // As Next.js serves it: the module's POST answers the fetch events of the route (edge-runtime's dispatchFetch).
    fs.writeFileSync(path.join(folder, 'entry.ts'), [
      `import * as route from ${JSON.stringify(path.join(__dirname, 'recipes/next-edge-route.ts'))}`,
      'if (route.runtime !== \'edge\') throw new Error(\'not an edge route\')',
      'addEventListener(\'fetch\', (event: any) => { event.respondWith(route.POST(event.request)) })'
    ].join('\n'))
    const script = await bundleEntry(folder, path.join(folder, 'entry.ts'), 'next.js', { format: 'iife', inlineBundle: true })
    const { EdgeRuntime } = createRequire(path.join(installed.dir, 'node_modules/'))('edge-runtime') as { EdgeRuntime: new (options: { initialCode: string }) => EdgeVm }
    vm = new EdgeRuntime({ initialCode: fs.readFileSync(script, 'utf8') })
  })
  after(() => { if (folder !== '') fs.rmSync(folder, { recursive: true, force: true }) })

  const post = async (headers: Record<string, string>, body: Uint8Array | string): Promise<{ status: number, json: unknown }> => {
    const response = await (vm as EdgeVm).dispatchFetch('http://127.0.0.1/api/echo', { method: 'POST', headers, body })
    return { status: response.status, json: await response.json() }
  }
  const cases: Array<[string, Record<string, string>, Uint8Array | string, { status: number, json: unknown }]> = [
    ['JSON', { 'content-type': 'application/json' }, '{"a":[1,"\u00e9"]}', { status: 200, json: { received: { a: [1, '\u00e9'] } } }],
    ['JSON that does not parse', { 'content-type': 'application/json' }, '{"a":', { status: 400, json: { error: 'entity.parse.failed' } }],
    ['JSON over 100kb', { 'content-type': 'application/json' }, JSON.stringify({ pad: 'x'.repeat(110_000) }), { status: 413, json: { error: 'entity.too.large' } }],
    // edge-runtime has no DecompressionStream: a compressed body is refused rather than read unbounded.
    ['gzip JSON', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, new Uint8Array(zlib.gzipSync('{}')), { status: 415, json: { error: 'encoding.unsupported' } }],
    ['another type', { 'content-type': 'text/plain' }, 'hi', { status: 200, json: {} }]
  ]
  for (const [name, headers, body, expected] of cases) {
    it(name, async (t) => {
      if (skip !== null) return t.skip(skip)
      assert.deepEqual(await post(headers, body), expected)
    })
  }
})
