// Each entry loads only what its first request needs: a fresh process per case, its require.cache read after one request.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'

const run = promisify(execFile)

interface FirstRequest {
  error: string | null
  parsed: unknown
  /** Packages under node_modules that the process loaded (tsx and esbuild are the test's own loader). */
  packages: string[]
  /** Modules of src/ that the process loaded. */
  modules: string[]
}

async function firstRequest (name: string, env: Record<string, string> = {}): Promise<FirstRequest> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(__dirname, 'first-request.ts'), name], {
    env: { ...process.env, DEBUG: '', ...env },
    timeout: 60_000
  })
  return JSON.parse(stdout) as FirstRequest
}

/** What reading a JSON body whole needs: raw-body and its own dependencies. */
const READER = ['bytes', 'depd', 'http-errors', 'iconv-lite', 'inherits', 'raw-body', 'safer-buffer', 'setprototypeof', 'statuses',
  'toidentifier', 'unpipe']
/**
 * What every entry's pipeline loads with it, so that no request loads a module: content-type (the default entry's
 * lenient Content-Type grammar) and on-finished (the default entry's "already read" check, and the waits on a
 * response's end that the error paths' read-off and stored files make).
 */
const PIPELINE = ['content-type', 'ee-first', 'on-finished']
const LOADER = ['esbuild', 'tsx']

function assertNone (loaded: string[], unwanted: string[], what: string): void {
  assert.deepEqual(loaded.filter((name) => unwanted.some((prefix) => name === prefix || name.startsWith(prefix))), [], what)
}

describe('what the first request loads', () => {
  for (const entry of ['default', 'legacy']) {
    it(`${entry} json(): the reader's packages and the json parser, nothing else`, async () => {
      const result = await firstRequest(`${entry} json`)
      assert.deepEqual([result.error, result.parsed], [null, { a: [1, 2] }])
      assert.deepEqual(result.packages, [...READER, ...LOADER, ...PIPELINE].sort())
      // The readers, and with them the Web source, are the default entry's; a middleware never needs the Web source.
      const readers = entry === 'legacy' ? ['readers', 'sources/web'] : []
      assertNone(result.modules, ['multipart/', 'multer', 'koa', 'hono', 'nest', 'parsers/urlencoded', 'parsers/form', 'parsers/text', 'parsers/raw', ...readers], 'src modules')
    })
  }

  it('readJson(): the same as json()', async () => {
    const result = await firstRequest('readJson')
    assert.deepEqual([result.error, result.parsed], [null, { a: 1 }])
    assert.deepEqual(result.packages, [...READER, ...LOADER, ...PIPELINE].sort())
  })

  it('loads debug where DEBUG is set, and only there', async () => {
    const result = await firstRequest('default json', { DEBUG: 'bodykit:*' })
    assert.ok(result.packages.includes('debug'), result.packages.join(' '))
  })

  it('loads type-is (the MIME database) for a type given as an extension name', async () => {
    const result = await firstRequest('default json, type given as an extension name')
    assert.deepEqual([result.error, result.parsed], [null, { a: 1 }])
    assert.ok(result.packages.includes('type-is') && result.packages.includes('mime-db'), result.packages.join(' '))
  })

  it('loads qs for a nested form', async () => {
    const result = await firstRequest('default urlencoded, nested')
    assert.deepEqual([result.error, result.parsed], [null, { a: { b: '1' }, c: '2' }])
    assert.ok(result.packages.includes('qs'), result.packages.join(' '))
    assertNone(result.packages, ['type-is', 'mime-db', 'secure-json-parse', 'debug'], 'packages')
  })

  it('bodykit/multer: the multipart stage, none of the other parsers, no whole-body reader and no charset codec', async () => {
    const result = await firstRequest('multer memory upload')
    assert.deepEqual([result.error, result.parsed], [null, { body: { a: '1' }, file: 'hello' }])
    assertNone(result.packages, ['raw-body', 'iconv-lite', 'busboy', 'qs', 'side-channel', 'type-is', 'mime-types', 'mime-db', 'secure-json-parse', 'debug'], 'packages')
    assertNone(result.modules, ['parsers/', 'factories', 'readers', 'sources/web', 'index', 'legacy', 'koa', 'hono', 'nest', 'multipart/fields'], 'src modules')
  })

  it('bodykit/koa bodyParser(), as the module and as the named export: qs for the forms it reads, no multipart stage, no koaBody', async () => {
    for (const name of ['koa bodyParser json', 'koa named bodyParser json']) {
      const result = await firstRequest(name)
      assert.deepEqual([result.error, result.parsed], [null, { a: 1 }])
      // Its default enableTypes reads forms, every one through qs (as co-body): loaded when the middleware is created.
      const formParser = result.packages.filter((pkg) => !READER.includes(pkg) && !LOADER.includes(pkg) && !PIPELINE.includes(pkg))
      assert.ok(formParser.includes('qs'), formParser.join(' '))
      assertNone(formParser, ['type-is', 'mime-db', 'busboy', 'debug'], 'packages')
      assertNone(result.modules, ['multipart/', 'parsers/multipart', 'parsers/urlencoded', 'koa/koa-body', 'koa/formidable', 'multer', 'hono', 'nest'], 'src modules')
    }
  })

  it('bodykit/koa bodyParser({ enableTypes: [\'json\'] }): no qs, and secure-json-parse for its guard', async () => {
    const result = await firstRequest('koa bodyParser json only')
    assert.deepEqual([result.error, result.parsed], [null, { a: 1 }])
    // co-body refuses a `__proto__` key: the guard's scanner loads with the middleware.
    assert.deepEqual(result.packages, [...READER, ...LOADER, ...PIPELINE, 'secure-json-parse'].sort())
  })
})
