// Issue 9: curl, python's urllib and Node's fetch post to the playground; each must see what it sees with body-parser, 413s included.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import zlib from 'node:zlib'
import { entries } from '../hostile/helpers'
import { curl, curlPath, nodeFetch, python, pythonPath, skipReason, startPlayground, visible, type ParserModule, type Seen } from './drivers'

const BIG = 50 * 1024 * 1024
const JSON_TYPE = { 'Content-Type': 'application/json' }
const FORM_TYPE = { 'Content-Type': 'application/x-www-form-urlencoded' }

let tmp = ''
let bigFile = ''
let gzipFile = ''
let jsonFile = ''
before(() => {
  tmp = mkdtempSync(join(os.tmpdir(), 'bodykit-clients-'))
  bigFile = join(tmp, 'big.bin')
  writeFileSync(bigFile, Buffer.alloc(BIG))
  jsonFile = join(tmp, 'body.json')
  writeFileSync(jsonFile, JSON.stringify({ file: 'é 漢字 😀', n: [1, 2] }))
  gzipFile = join(tmp, 'body.json.gz')
  writeFileSync(gzipFile, zlib.gzipSync(JSON.stringify({ zipped: 'é' })))
})
after(() => rmSync(tmp, { recursive: true, force: true }))

for (const entry of entries) {
  describe(`real clients, ${entry.name} entry vs ${entry.name === 'default' ? 'body-parser 2' : 'body-parser 1'}`, () => {
    const urls: string[] = []
    const stops: Array<() => Promise<void>> = []
    before(async () => {
      for (const parsers of [entry.bodykit, entry.reference]) {
        const server = await startPlayground(parsers as unknown as ParserModule)
        urls.push(server.url)
        stops.push(server.close)
      }
    })
    after(async () => { for (const stop of stops) await stop() })

    /** Runs `send` against bodykit's server, then body-parser's; asserts the client saw the same; returns bodykit's. */
    async function same (send: (base: string) => Promise<Seen>): Promise<Seen> {
      const mine = await send(urls[0])
      const reference = await send(urls[1])
      assert.deepEqual(visible(mine), visible(reference))
      return mine
    }

    describe('curl', { skip: skipReason('curl', curlPath) }, () => {
      it('plain JSON, and a form with --data-urlencode', async () => {
        const json = await same((base) => curl(['-H', 'Content-Type: application/json', '-d', '{"a":"é","b":[1,2]}', base + 'try/json']))
        assert.deepEqual(json.answer, { status: 200, type: null, body: { a: 'é', b: [1, 2] } })
        const form = await same((base) => curl(['--data-urlencode', 'name=Zoë 漢字 😀', '--data-urlencode', 'q=a&b', '-d', 'x[y]=1', base + 'try/form']))
        assert.deepEqual(form.answer, { status: 200, type: null, body: { name: 'Zoë 漢字 😀', q: 'a&b', x: { y: '1' } } })
      })

      it('a gzip file with Content-Encoding, and a chunked upload', async () => {
        const gzip = await same((base) => curl(['-H', 'Content-Type: application/json', '-H', 'Content-Encoding: gzip', '--data-binary', '@' + gzipFile, base + 'try/json']))
        assert.deepEqual(gzip.answer, { status: 200, type: null, body: { zipped: 'é' } })
        const chunked = await same((base) => curl(['-H', 'Content-Type: application/json', '-H', 'Transfer-Encoding: chunked', '--data-binary', '@' + jsonFile, base + 'try/json']))
        assert.deepEqual(chunked.answer, { status: 200, type: null, body: { file: 'é 漢字 😀', n: [1, 2] } })
      })

      it('50 MiB to the 1 KB route, declared and chunked: curl receives the 413', async () => {
        for (const framing of [[], ['-H', 'Transfer-Encoding: chunked']]) {
          const seen = await same((base) => curl(['-H', 'Content-Type: application/octet-stream', ...framing, '--data-binary', '@' + bigFile, base + 'try/upload']))
          assert.equal(seen.status, 413, seen.error)
        }
      })
    })

    describe('python urllib.request', { skip: skipReason('python3', pythonPath) }, () => {
      it('a form and a JSON body', async () => {
        const form = await same((base) => python(base + 'try/form', FORM_TYPE, Buffer.from('name=Zo%C3%AB+%E6%BC%A2&tags%5B%5D=a&tags%5B%5D=b')))
        assert.deepEqual(form.answer, { status: 200, type: null, body: { name: 'Zoë 漢', tags: ['a', 'b'] } })
        const json = await same((base) => python(base + 'try/json', JSON_TYPE, Buffer.from('{"py":"é 😀"}')))
        assert.deepEqual(json.answer, { status: 200, type: null, body: { py: 'é 😀' } })
      })

      it('50 MiB to the 1 KB route gets HTTPError 413, not a broken pipe', async () => {
        const seen = await same((base) => python(base + 'try/upload', { 'Content-Type': 'application/octet-stream' }, { size: BIG }))
        assert.equal(seen.error, 'HTTPError 413')
        assert.equal((seen.answer as { type: string }).type, 'entity.too.large')
      })
    })

    describe('Node fetch', () => {
      /** A JSON body in pieces, sent chunked. */
      const stream = (): ReadableStream<Uint8Array> => new ReadableStream({
        start (controller) {
          for (const piece of ['{"str', 'eamed":', '"é 漢字"}']) controller.enqueue(Buffer.from(piece))
          controller.close()
        }
      })

      it('a streamed body (duplex: half) and a gzip body', async () => {
        const streamed = await same((base) => nodeFetch(base + 'try/json', JSON_TYPE, stream()))
        assert.deepEqual(streamed.answer, { status: 200, type: null, body: { streamed: 'é 漢字' } })
        const gzip = await same((base) => nodeFetch(base + 'try/json', { ...JSON_TYPE, 'Content-Encoding': 'gzip' }, zlib.gzipSync('{"z":1}')))
        assert.deepEqual(gzip.answer, { status: 200, type: null, body: { z: 1 } })
      })

      it('50 MiB to the 1 KB route gets the 413', async () => {
        const seen = await same((base) => nodeFetch(base + 'try/upload', { 'Content-Type': 'application/octet-stream' }, Buffer.alloc(BIG)))
        assert.equal(seen.status, 413, seen.error)
      })
    })
  })
}
