// Every error bodykit hands to an application takes any assignment an error handler makes (Koa's `ctx.onerror` sets
// `err.status`, loggers redact `message`, filters rewrite `statusCode`): drawn keys and values, on each kind of error.
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { Hono } from 'hono'
import * as errors from '../../src/errors'
import bodykit from '../../src/index'
import bodykitMulter from '../../src/multer'
import { MESSAGES, asClientError, unreadableFileName } from '../../src/multer/multer-error'
import { toNestException } from '../../src/nest/exceptions'
import { bodyParser } from '../../src/koa'
import * as hono from '../../src/hono'
import * as web from '../../src/web'

const RUNS = Number(process.env.ASSIGNABLE_RUNS ?? 300)

/** Each factory of src/errors.ts, called as bodykit calls it; the test below checks that none is left out. */
const FACTORY_CALLS: Record<string, () => unknown> = {
  unsupportedCharset: () => errors.unsupportedCharset('koi8-x'),
  charsetLoadFailed: () => errors.charsetLoadFailed('shift_jis', Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' })),
  inflateDisabled: () => errors.inflateDisabled('gzip'),
  unsupportedContentEncoding: () => errors.unsupportedContentEncoding('compress'),
  tooManyParameters: () => errors.tooManyParameters(),
  depthExceeded: () => errors.depthExceeded(),
  verifyFailed: () => errors.verifyFailed(new Error('signature'), Buffer.from('{}')),
  parseFailed: () => errors.parseFailed(new SyntaxError('Unexpected token'), '{'),
  validationFailed: () => errors.validationFailed([{ message: 'Required', path: ['name'] }], {}),
  validationCrashed: () => errors.validationCrashed(new TypeError('schema broke')),
  thrownByUser: () => errors.thrownByUser(null),
  readFailed: () => errors.readFailed(Object.assign(new Error('unexpected end of file'), { code: 'Z_BUF_ERROR' })),
  entityTooLarge: () => errors.entityTooLarge(100, 101),
  streamEncodingSet: () => errors.streamEncodingSet(),
  streamNotReadable: () => errors.streamNotReadable(),
  requestAborted: () => errors.requestAborted(5, 10),
  sizeMismatch: () => errors.sizeMismatch(5, 10),
  malformedContentLength: () => errors.malformedContentLength('1e3'),
  invalidBoundary: () => errors.invalidBoundary(),
  malformedPartHeader: () => errors.malformedPartHeader('avatar'),
  unexpectedEndOfForm: () => errors.unexpectedEndOfForm(),
  missingFieldName: () => errors.missingFieldName(),
  unexpectedFile: () => errors.unexpectedFile('avatar'),
  unsupportedFieldCharset: () => errors.unsupportedFieldCharset('title'),
  tooManyParts: () => errors.tooManyParts(10),
  tooManyFields: () => errors.tooManyFields(10),
  tooManyFiles: () => errors.tooManyFiles(1, 'avatar'),
  fileTooLarge: () => errors.fileTooLarge(10, 'avatar'),
  fieldTooLarge: () => errors.fieldTooLarge(10, 'title'),
  fieldsTooLarge: () => errors.fieldsTooLarge(10),
  filesTooLarge: () => errors.filesTooLarge(10),
  fieldNameTooLarge: () => errors.fieldNameTooLarge(10),
  storageFailed: () => errors.storageFailed(new Error('ENOSPC'))
}

const BOUNDARY = 'AssignBoundary'
const FORM_TYPE = 'multipart/form-data; boundary=' + BOUNDARY
const BIG_FILE_FORM = '--' + BOUNDARY + '\r\nContent-Disposition: form-data; name="avatar"; filename="a.txt"\r\n\r\n' + 'x'.repeat(500) + '\r\n--' + BOUNDARY + '--\r\n'
const BROKEN_FORM = '--' + BOUNDARY + '\r\nContent-Disposition: form-data; name="a"\r\nbroken header\r\n\r\n1\r\n--' + BOUNDARY + '--\r\n'

type Middleware = (req: never, res: never, next: (err?: unknown) => void) => void

/** The error a middleware passes to `next` for a body, read from a stream with headers (as users' tests build requests). */
function errorOfMiddleware (middleware: Middleware, contentType: string, body: string): Promise<unknown> {
  const req = Object.assign(new PassThrough(), {
    method: 'POST', url: '/', headers: { 'content-type': contentType, 'content-length': String(Buffer.byteLength(body)) }
  })
  const answer = new Promise<unknown>((resolve) => {
    middleware(req as never, {} as never, (err) => resolve(err))
  })
  req.end(body)
  return answer
}

function requestOf (contentType: string, body: string): Request {
  return new Request('http://localhost/', { method: 'POST', headers: { 'content-type': contentType }, body })
}

async function rejectionOf (promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}

function thrownBy (run: () => unknown): unknown {
  try {
    run()
  } catch (err) {
    return err
  }
  throw new Error('expected a throw')
}

/** Every kind of error bodykit creates or passes on, each made fresh by its maker. */
async function collectErrors (): Promise<Array<[string, () => Promise<unknown>]>> {
  const honoApp = new Hono().post('/json', hono.json(), (c) => c.text('ok'))
  let honoError: unknown
  honoApp.onError((err, c) => {
    honoError = err
    return c.text('refused', 400)
  })
  const makers: Array<[string, () => Promise<unknown>]> = [
    ...Object.entries(FACTORY_CALLS).map(([name, make]): [string, () => Promise<unknown>] => [name, async () => make()]),
    ...Object.keys(MESSAGES).concat('NO_SUCH_CODE').map((code): [string, () => Promise<unknown>] => [
      'MulterError ' + code, async () => new bodykitMulter.MulterError(code, 'avatar', 'a.txt')
    ]),
    ...Object.keys(MESSAGES).map((code): [string, () => Promise<unknown>] => [
      'Nest exception of ' + code, async () => toNestException(new bodykitMulter.MulterError(code, 'avatar'))
    ]),
    ['busboy-like error with a 400', async () => asClientError(new Error('Malformed part header'))],
    ['unreadable filename*', async () => unreadableFileName('avatar')],
    ['json() on a malformed body', () => errorOfMiddleware(bodykit.json() as Middleware, 'application/json', '{"a":')],
    ['json() over its limit', () => errorOfMiddleware(bodykit.json({ limit: 2 }) as Middleware, 'application/json', '{"a":1}')],
    ['multipart() on a malformed part header', () => errorOfMiddleware(bodykit.multipart() as Middleware, FORM_TYPE, BROKEN_FORM)],
    ['multipart() over fileSizeLimit', () => errorOfMiddleware(bodykit.multipart({ files: { fileSizeLimit: 10 } }) as Middleware, FORM_TYPE, BIG_FILE_FORM)],
    ['multer over fileSize', () => errorOfMiddleware(bodykitMulter({ limits: { fileSize: 10 } }).single('avatar') as Middleware, FORM_TYPE, BIG_FILE_FORM)],
    ['multer on a malformed part header', () => errorOfMiddleware(bodykitMulter().any() as Middleware, FORM_TYPE, BROKEN_FORM)],
    ['Nest exception of a malformed part header', async () => toNestException(await errorOfMiddleware(bodykitMulter().any() as Middleware, FORM_TYPE, BROKEN_FORM))],
    ['readJson on a Request', () => rejectionOf(bodykit.readJson(requestOf('application/json', '{"a":') as never))],
    ['bodykit/web readJson', () => rejectionOf(web.readJson(requestOf('application/json', '[1,')))],
    ['bodykit/web readMultipart', () => rejectionOf(web.readMultipart(requestOf(FORM_TYPE, BROKEN_FORM)))],
    ['bodykit/koa UnsupportedBodyTypeError', async () => thrownBy(() => bodyParser({ enableTypes: ['yaml'] } as never))],
    ['bodykit/hono HTTPException', async () => {
      honoError = undefined
      await honoApp.request('/json', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' })
      return honoError
    }]
  ]
  return makers
}

/** What an error handler may assign on `err`: its own keys, its prototypes' (up to Object's), and the usual ones. */
function assignableKeys (err: object): string[] {
  const keys = new Set(['status', 'statusCode', 'expose', 'message', 'name', 'code', 'type', 'stack', 'cause', 'headers', 'body', 'field', 'limit'])
  for (let holder: object | null = err; holder !== null && holder !== Object.prototype; holder = Object.getPrototypeOf(holder) as object | null) {
    for (const key of Object.getOwnPropertyNames(holder)) keys.add(key)
  }
  keys.delete('__proto__')
  return [...keys].sort()
}

describe('errors an application may change', () => {
  it('the factory table covers every error factory of src/errors.ts', () => {
    const factories = Object.keys(errors).filter((name) => name !== 'isBodyParserError')
    assert.deepEqual(Object.keys(FACTORY_CALLS).sort(), factories.sort())
  })

  it('every key of every kind of error takes any value, and reads it back', async () => {
    const makers = await collectErrors()
    const made = await Promise.all(makers.map(async ([name, make]) => [name, await make()] as const))
    for (const [name, err] of made) assert.ok(err !== null && typeof err === 'object', name + ' made no error')
    await fc.assert(fc.asyncProperty(
      fc.integer({ min: 0, max: makers.length - 1 }),
      fc.array(fc.tuple(fc.nat(), fc.anything()), { minLength: 1, maxLength: 8 }),
      async (index, assignments) => {
        const [name, make] = makers[index]
        const err = await make() as Record<string, unknown>
        const keys = assignableKeys(err)
        for (const [pick, value] of assignments) {
          const key = keys[pick % keys.length]
          assert.equal(Reflect.set(err, key, value), true, name + ': ' + key + ' cannot be assigned')
          assert.ok(Object.is(err[key], value), name + ': ' + key + ' does not read back what was assigned')
        }
      }
    ), { numRuns: RUNS })
  })

  it('a MulterError keeps its default status until assigned, then reads what was assigned, as an own property', () => {
    const err = new bodykitMulter.MulterError('LIMIT_FILE_SIZE', 'avatar')
    assert.deepEqual([err.status, err.statusCode, Object.hasOwn(err, 'status')], [413, 413, false])
    err.status = 500
    assert.deepEqual([err.status, err.statusCode, Object.hasOwn(err, 'status'), Object.hasOwn(err, 'statusCode')], [500, 500, true, false])
    err.statusCode = 418
    assert.deepEqual([err.status, err.statusCode], [500, 418])
    assert.equal(new bodykitMulter.MulterError('LIMIT_FILE_SIZE').status, 413)
  })
})
