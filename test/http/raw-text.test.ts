// raw() and text() over HTTP for both entries: Buffers, charsets, defaultCharset, default types.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { entries } from '../helpers/entries'
import { assertBody, assertReply, httpError } from '../helpers/expect'
import { buffer, serve } from '../helpers/server'

const OCTETS = 'application/octet-stream'

for (const entry of entries) {
  const { raw, text } = entry.parsers

  describe(`${entry.name} entry: raw()`, () => {
    it('stores the body bytes as a Buffer', async (t) => {
      const bytes = Buffer.from([0x00, 0xff, 0x10, 0x80, 0x0d, 0x0a])
      let isBuffer = false
      const server = await serve(t, [raw(), function check (req, _res, next) { isBuffer = Buffer.isBuffer((req as { body?: unknown }).body); next() }])
      assertBody(await server.post(OCTETS, bytes), buffer(bytes))
      assert.equal(isBuffer, true)
    })

    it('gives an empty Buffer for an empty body', async (t) => {
      const server = await serve(t, raw())
      assertBody(await server.post(OCTETS, ''), buffer(''))
    })

    it('ignores any charset, even an unknown one', async (t) => {
      const server = await serve(t, raw({ verify: () => {} }))
      assertBody(await server.post('application/octet-stream; charset=x-nothing', 'abc'), buffer('abc'))
    })

    it('keeps a BOM', async (t) => {
      const server = await serve(t, raw())
      const bytes = Buffer.from([0xef, 0xbb, 0xbf, 0x41])
      assertBody(await server.post(OCTETS, bytes), buffer(bytes))
    })

    it('defaults to application/octet-stream only', async (t) => {
      const server = await serve(t, raw())
      assertBody(await server.post('application/pdf', 'x'), entry.unparsedBody)
      assertBody(await server.post('text/plain', 'x'), entry.unparsedBody)
    })

    it('reads a chunked body', async (t) => {
      const server = await serve(t, raw())
      assertBody(await server.request({ headers: { 'content-type': OCTETS }, body: ['ab', 'cd', Buffer.from([0xfe])] }), buffer(Buffer.from('abcd\u00fe', 'latin1')))
    })
  })

  describe(`${entry.name} entry: text()`, () => {
    it('stores the body as a string', async (t) => {
      const server = await serve(t, text())
      assertBody(await server.post('text/plain', 'hello, world ✓'), 'hello, world ✓')
    })

    it('gives an empty string for an empty body', async (t) => {
      const server = await serve(t, text())
      assertBody(await server.post('text/plain', ''), '')
    })

    it('strips a utf-8 BOM', async (t) => {
      const server = await serve(t, text())
      assertBody(await server.post('text/plain', Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0x69])), 'hi')
    })

    it('decodes with the charset of the Content-Type', async (t) => {
      const server = await serve(t, text())
      assertBody(await server.post('text/plain; charset=iso-8859-1', Buffer.from([0x63, 0x61, 0x66, 0xe9])), 'café')
      assertBody(await server.post('text/plain; charset=utf-16be', Buffer.from([0x04, 0x1f, 0x04, 0x40])), 'Пр')
      assertBody(await server.post('text/plain; charset=KOI8-R', Buffer.from([0xf0, 0xd2])), 'Пр')
      assertBody(await server.post('text/plain; charset=windows-1252', Buffer.from([0x80])), '€')
    })

    it('decodes with defaultCharset (default utf-8) when the Content-Type has none', async (t) => {
      const server = await serve(t, [text({ defaultCharset: 'iso-8859-1', type: 'text/html' }), text()])
      assertBody(await server.post('text/html', Buffer.from([0xe9])), 'é')
      assertBody(await server.post('text/html; charset=utf-8', Buffer.from('é')), 'é')
      assertBody(await server.post('text/plain', Buffer.from('é')), 'é')
    })

    it('decodes invalid utf-8 with replacement characters', async (t) => {
      const server = await serve(t, text())
      assertBody(await server.post('text/plain', Buffer.from([0x61, 0xff, 0x62])), 'a\ufffdb')
    })

    it('answers 415 for an unknown defaultCharset when a request needs it', async (t) => {
      const server = await serve(t, text({ defaultCharset: 'x-made-up' }))
      assertReply(await server.post('text/plain', 'x'), 415,
        httpError(415, 'unsupported charset "X-MADE-UP"', { charset: 'x-made-up', type: 'charset.unsupported' }))
    })

    it('defaults to text/plain only', async (t) => {
      const server = await serve(t, text())
      assertBody(await server.post('text/html', '<p>'), entry.unparsedBody)
      assertBody(await server.post('text/plain; format=flowed', 'flow'), 'flow')
    })

    it('parses every text type with type: "text/*"', async (t) => {
      const server = await serve(t, text({ type: 'text/*' }))
      assertBody(await server.post('text/csv', 'a,b'), 'a,b')
    })
  })
}
