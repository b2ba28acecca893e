// Issue 9: headless Chromium drives the playground page; for each request it must see what it sees with body-parser, 413s included.
import assert from 'node:assert/strict'
import { it } from 'node:test'
import { click, describeChromium } from './chromium-harness'
import { inPage } from './drivers'

describeChromium('headless Chromium against the playground', (entry, same) => {
  it('the page\'s utf-8 form (é, 漢字, an emoji, repeated checkboxes, nested names) is parsed as body-parser parses it', async () => {
    const seen = await same((page) => click(page, '#utf8 button', '#out-utf8'))
    assert.deepEqual(seen.answer, { status: 200, type: null, body: { name: 'Zoë 漢字 😀', address: { city: 'Paris' }, colour: ['red', 'green'], tags: ['new', 'urgent'] } })
  })

  it('a form with a[b][c] and a[] names', async () => {
    const seen = await same((page) => inPage(page, 'form', '/try/form', [['a[b][c]', 'deep'], ['list[]', 'one'], ['list[]', 'two'], ['x', 'é 漢字 😀']], {}, 0))
    assert.deepEqual(seen.answer, { status: 200, type: null, body: { a: { b: { c: 'deep' } }, list: ['one', 'two'], x: 'é 漢字 😀' } })
  })

  it('the page\'s ISO-8859-1 form with the utf8=✓ sentinel (é, and ☃ sent as a numeric entity)', async () => {
    const seen = await same((page) => click(page, '#latin1 button', '#out-latin1'))
    assert.equal(seen.status, 200)
    // Only body-parser 2 reads charsetSentinel and interpretNumericEntities; 1.x decodes the bytes as utf-8.
    if (entry.name === 'default') assert.deepEqual((seen.answer as { body: unknown }).body, { word: 'café ☃' })
  })

  it('the page\'s text/plain form', async () => {
    const seen = await same((page) => click(page, '#plain button', '#out-plain'))
    assert.deepEqual(seen.answer, { status: 200, type: null, body: 'note=hello é 漢字\r\n' })
  })

  it('a multipart form is skipped, not parsed', async () => {
    const seen = await same((page) => inPage(page, 'form', '/try/form', [['a', '1']], { enctype: 'multipart/form-data' }, 0))
    assert.deepEqual(seen.answer, { status: 200, type: null, body: entry.name === 'default' ? null : {} })
  })

  it('the page\'s JSON and gzip-compressed JSON sent with fetch', async () => {
    const body = { name: 'Ada', langs: ['en', 'fr'], admin: false }
    assert.deepEqual((await same((page) => click(page, '#send-json', '#out-json'))).answer, { status: 200, type: null, body })
    assert.deepEqual((await same((page) => click(page, '#send-gzip', '#out-json'))).answer, { status: 200, type: null, body })
  })

  it('malformed JSON typed into the page gives 400 entity.parse.failed', async () => {
    const seen = await same(async (page) => {
      await page.fill('#json-text', '{"name": "Ada')
      return click(page, '#send-json', '#out-json')
    })
    assert.equal(seen.status, 400)
    assert.equal((seen.answer as { type: string }).type, 'entity.parse.failed')
  })

  it('a deflate body made with CompressionStream, a URLSearchParams body and an unknown charset', async () => {
    const deflated = await same((page) => inPage(page, 'sendCompressed', '/try/json', '{"packed":"é"}', 'deflate', 'application/json'))
    assert.deepEqual(deflated.answer, { status: 200, type: null, body: { packed: 'é' } })
    const params = await same((page) => inPage(page, 'sendParams', '/try/form', [['q', 'a&b=c'], ['n[]', '1'], ['n[]', '2']]))
    assert.deepEqual(params.answer, { status: 200, type: null, body: { q: 'a&b=c', n: ['1', '2'] } })
    const charset = await same((page) => inPage(page, 'send', 'fetch', '/try/json', { text: '{}', type: 'application/json; charset=klingon' }))
    assert.equal(charset.status, 415)
    assert.equal((charset.answer as { type: string }).type, 'charset.unsupported')
  })

  it('navigator.sendBeacon', async () => {
    const seen = await same(async (page) => {
      const marker = Math.random().toString(36).slice(2)
      assert.equal(await inPage(page, 'beacon', '/try/json', JSON.stringify({ beacon: marker }), 'application/json'), true)
      // The sender never sees the answer: the server keeps the last one.
      let last: { status: number, body: { beacon: string } | null } = { status: 0, body: null }
      // The page asks the server until the beacon has arrived: no time bound, a loaded machine only makes it slower.
      while (last.body?.beacon !== marker) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        last = await inPage<typeof last | null>(page, 'last') ?? last
      }
      assert.equal(last.body?.beacon, marker)
      return { status: last.status, answer: { ...last, body: { beacon: 'marker' } } }
    })
    assert.equal(seen.status, 200)
  })

  it('the page\'s file upload of 5 KB to the 1 KB route gives the 413', async () => {
    const seen = await same(async (page) => {
      await page.setInputFiles('#file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.alloc(5000, 'a') })
      return click(page, '#send-file', '#out-upload')
    })
    assert.equal(seen.status, 413)
  })
})
