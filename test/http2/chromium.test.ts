// Issue 17: headless Chromium over HTTP/2 and TLS against the playground: a streamed fetch (no Content-Length),
// a form post and over-limit uploads, each compared with what body-parser answers the same request with a length.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { chromiumPath, inPage, launchChromium, openPlayground, skipReason, startPlayground, visible, type ParserModule, type Seen } from '../clients/drivers'
import { entries as allEntries } from '../hostile/helpers'
import { testCertificate, withHttp2Reading } from './helpers'

// bodykit's reading of HTTP/2 bodies without a length, on in both entries (bodykit/legacy's default is off).
const entries = withHttp2Reading(allEntries, true)

const MiB = 1024 * 1024

describe('headless Chromium over HTTP/2 (TLS) against the playground', { skip: skipReason('chromium', chromiumPath) }, () => {
  let browser: Browser
  before(async () => { browser = await launchChromium(['--ignore-certificate-errors']) })
  after(async () => { await browser?.close() })

  for (const entry of entries) {
    describe(`${entry.name} entry vs ${entry.name === 'default' ? 'body-parser 2' : 'body-parser 1'}`, () => {
      const sides: Array<{ page: Page, close: () => Promise<void> }> = []
      before(async () => {
        for (const parsers of [entry.bodykit, entry.reference]) {
          const server = await startPlayground(parsers as unknown as ParserModule, testCertificate())
          sides.push({ page: await openPlayground(browser, server.url), close: server.close })
        }
      })
      after(async () => {
        for (const side of sides) {
          await side.page.close()
          await side.close()
        }
      })
      const [mine, reference] = [() => sides[0].page, () => sides[1].page]

      it('the page was loaded over h2', async () => {
        assert.equal(await inPage<string>(mine(), 'protocol'), 'h2')
        assert.equal(await inPage<string>(reference(), 'protocol'), 'h2')
      })

      /** bodykit's answer to a streamed fetch (no length) must be body-parser's to the same bytes sent as a Blob. */
      async function streamedAsBlob (url: string, body: { text?: string, size?: number, type: string, pieces?: number }): Promise<Seen> {
        const streamed = await inPage(mine(), 'sendStream', url, body)
        const blob = await inPage(reference(), 'send', 'fetch', url, body)
        assert.deepEqual(visible(streamed), visible(blob))
        return streamed
      }

      it('fetch with a ReadableStream body (duplex: half, no Content-Length): JSON, text and a form', async () => {
        const json = await streamedAsBlob('/try/json', { text: '{"streamed":["é","漢字"],"n":1}', type: 'application/json', pieces: 3 })
        assert.deepEqual(json.answer, { status: 200, type: null, body: { streamed: ['é', '漢字'], n: 1 } })
        const text = await streamedAsBlob('/try/text', { text: 'streamed text é', type: 'text/plain' })
        assert.deepEqual(text.answer, { status: 200, type: null, body: 'streamed text é' })
        const form = await streamedAsBlob('/try/form', { text: 'a[b]=1&c=%C3%A9', type: 'application/x-www-form-urlencoded', pieces: 2 })
        assert.deepEqual(form.answer, { status: 200, type: null, body: { a: { b: '1' }, c: 'é' } })
        const malformed = await streamedAsBlob('/try/json', { text: '{"cut":', type: 'application/json' })
        assert.equal(malformed.status, 400)
      })

      it('a form post, as body-parser parses it', async () => {
        const fields = [['a[b][c]', 'deep'], ['list[]', 'one'], ['list[]', 'two'], ['x', 'é 漢字 😀']]
        const seen = await inPage(mine(), 'form', '/try/form', fields, {}, 0)
        assert.deepEqual(visible(seen), visible(await inPage(reference(), 'form', '/try/form', fields, {}, 0)))
        assert.deepEqual(seen.answer, { status: 200, type: null, body: { a: { b: { c: 'deep' } }, list: ['one', 'two'], x: 'é 漢字 😀' } })
      })

      it('over-limit uploads to the 1 KB route reach the page as a 413: a 5 MiB Blob, and 5 MiB streamed without a length', async () => {
        const blob = await inPage(mine(), 'send', 'fetch', '/try/upload', { size: 5 * MiB, type: 'application/octet-stream' })
        assert.deepEqual(visible(blob), visible(await inPage(reference(), 'send', 'fetch', '/try/upload', { size: 5 * MiB, type: 'application/octet-stream' })))
        assert.equal(blob.status, 413, blob.error)
        const streamed = await inPage(mine(), 'sendStream', '/try/upload', { size: 5 * MiB, type: 'application/octet-stream', pieces: 80 })
        assert.equal(streamed.status, 413, streamed.error)
        assert.equal((streamed.answer as { type: string }).type, 'entity.too.large')
      })
    })
  }
})
