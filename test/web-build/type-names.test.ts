// The Web build's extension table against type-is (the Node builds' lookup): each name it knows gives type-is's type, any case, with a dot or a path; a name it lacks throws.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import typeis from 'type-is'
import { lookupWebExtension, WEB_EXTENSION_NAMES } from '../../src/web/type-names'
import { readJson } from '../../src/web'

describe('the Web build\'s extension names', () => {
  it('give what type-is gives, for each name in the table, as written in any case or after a dot', () => {
    for (const name of WEB_EXTENSION_NAMES) {
      for (const written of [name, name.toUpperCase(), '.' + name, 'file.' + name]) {
        assert.equal(lookupWebExtension(written), typeis.normalize(written), written)
      }
    }
  })

  it('refuse a name the table lacks with a TypeError naming it, where type-is would look in its database', async () => {
    assert.throws(() => lookupWebExtension('docx'), { name: 'TypeError', message: /option type "docx" is an extension name the Web build does not know/ })
    await assert.rejects(readJson(new Request('http://127.0.0.1/', { method: 'POST', body: '{}' }), { type: 'docx' }), TypeError)
  })

  it('match a request by the type they name', async () => {
    const request = new Request('http://127.0.0.1/', { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"a":1}' })
    assert.deepEqual(await readJson(request, { type: 'json' }), { a: 1 })
    const other = new Request('http://127.0.0.1/', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"a":1}' })
    assert.equal(await readJson(other, { type: ['json', 'xml'] }), undefined)
  })
})
