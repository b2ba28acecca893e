// The Web build's charsets against iconv-lite (the Node builds'): the labels decoded by hand agree with it byte for byte on every runtime; the others are the runtime's TextDecoder.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import iconv from 'iconv-lite'
import { decodeWebBody, knowsWebCharset } from '../../src/web/decode'
import { NODE_FORMS } from '../../src/parsers/node-forms'
import { WEB_FORMS, WEB_RULES } from '../../src/web/settings'
import { modern } from '../../src/variants'

const EVERY_BYTE = Uint8Array.from({ length: 256 }, (_, byte) => byte)

describe('the Web build\'s decoding', () => {
  it('reads the latin1, ascii and windows-1252 labels as iconv-lite does (WHATWG reads them all as windows-1252)', () => {
    for (const label of ['latin1', 'ISO-8859-1', 'iso_8859-1', 'l1', 'binary', 'ascii', 'US-ASCII', 'windows-1252', 'cp1252']) {
      assert.equal(decodeWebBody(EVERY_BYTE, label), iconv.decode(Buffer.from(EVERY_BYTE), label), label)
    }
  })

  it('reads utf-8 and the other labels TextDecoder knows as iconv-lite does for well-formed text, a BOM dropped', () => {
    const text = 'héllo wörld €'
    assert.equal(decodeWebBody(new TextEncoder().encode('\ufeff' + text), 'utf-8'), text)
    for (const label of ['utf-16le', 'utf-16be', 'koi8-r', 'iso-8859-2', 'windows-1251', 'shift_jis', 'gbk', 'big5', 'euc-kr']) {
      const bytes = iconv.encode(label.startsWith('utf-16') ? text : 'abc', label)
      assert.equal(decodeWebBody(bytes, label), iconv.decode(bytes, label), label)
    }
  })

  it('knows no charset the runtime cannot decode (then 415 charset.unsupported), as iconv-lite knows none it cannot', () => {
    assert.equal(knowsWebCharset('x-unknown'), false)
    assert.equal(knowsWebCharset('utf-32'), false, 'iconv-lite decodes utf-32; WHATWG has no utf-32 (docs/web.md)')
    assert.equal(knowsWebCharset('koi8-r'), true)
  })

  it('keeps the default entry\'s urlencoded rules, every extended form read by the linear parser', () => {
    const webRules = WEB_RULES.urlencoded
    const nodeRules = modern.urlencoded
    const [web, node] = [WEB_FORMS.nestedParser(), NODE_FORMS.nestedParser()]
    assert.deepEqual(Object.keys(webRules), Object.keys(nodeRules))
    for (const [key, value] of Object.entries(webRules)) {
      if (typeof value === 'function') assert.deepEqual([true, false, undefined, 'x'].map((v) => (value as (x: unknown) => unknown)(v)), [true, false, undefined, 'x'].map((v) => (nodeRules[key as keyof typeof nodeRules] as (x: unknown) => unknown)(v)), key)
      else assert.deepEqual(value, nodeRules[key as keyof typeof nodeRules], key)
    }
    const options = { depth: 32, strictDepth: true as const, allowPrototypes: true as const, parameterLimit: 1000, arrayLimit: 100 }
    assert.deepEqual(web('a[b]=1&a[c][]=2&a[c][]=3', options, 3), node('a[b]=1&a[c][]=2&a[c][]=3', options, 3))
  })
})
