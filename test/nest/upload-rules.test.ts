// bodykit/nest's rules against @nestjs/platform-express 11.2.10's, function by function: the injection metadata, the
// exception of every upload error, merged options and their defaults, the guarded fileFilter and closed array gaps.
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { describe, it } from 'node:test'
import { HttpException } from '@nestjs/common'
import fc from 'fast-check'
import createHttpError from 'http-errors'
import * as platformExpress from '@nestjs/platform-express'
import multer from '../../src/multer'
import * as bodykitNest from '../../src/nest'
import { toNestException } from '../../src/nest/exceptions'
import { closeArrayGaps, runUpload, type UploadMiddleware } from '../../src/nest/run-upload'
import { mergeUploadOptions, withNestDefaults } from '../../src/nest/upload-options'
import { asClientError, unreadableFileName } from '../../src/multer/multer-error'

/** Nest's own helpers, from the file its interceptors use (the package has no exports map). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nest = require('@nestjs/platform-express/multer/multer/multer.utils') as {
  transformException: (error: unknown) => unknown
  mergeMulterOptions: (options?: object | null, localOptions?: object) => Record<string, unknown>
  applyDefaultLimits: (options: object) => Record<string, unknown>
  closeArrayGaps: (store: object) => void
  runMulter: (middleware: UploadMiddleware, req: object, res: unknown) => Promise<void>
}

/** An exception as a client and an exception filter see it; any other value as itself. */
function describeException (value: unknown): unknown {
  if (!(value instanceof HttpException)) return { passedOn: value }
  return { class: value.constructor.name, status: value.getStatus(), response: value.getResponse(), message: value.message }
}

const CODES = ['LIMIT_PART_COUNT', 'LIMIT_FILE_SIZE', 'LIMIT_FILE_COUNT', 'LIMIT_FIELD_KEY', 'LIMIT_FIELD_VALUE', 'LIMIT_FIELD_COUNT', 'LIMIT_UNEXPECTED_FILE',
  'MISSING_FIELD_NAME', 'LIMIT_FIELD_NESTING', 'LIMIT_FIELD_ARRAY_INDEX', 'STREAM_DESTROYED', 'INVALID_FIELD_NAME']
const BUSBOY_MESSAGES = ['Multipart: Boundary not found', 'Malformed part header', 'Unexpected end of form', 'Unexpected end of file', 'Unsupported content type: multipart/mixed']

describe('bodykit/nest: injection', () => {
  it('declares the same optional dependency on MULTER_MODULE_OPTIONS as Nest\'s interceptors', () => {
    const metadataOf = (type: object): unknown[] => ['self:paramtypes', 'optional:paramtypes'].map((key) => Reflect.getMetadata(key, type))
    const nestMade = [platformExpress.FileInterceptor('f'), platformExpress.FilesInterceptor('f', 2), platformExpress.FileFieldsInterceptor([{ name: 'f' }]), platformExpress.AnyFilesInterceptor(), platformExpress.NoFilesInterceptor()]
    const bodykitMade = [bodykitNest.FileInterceptor('f'), bodykitNest.FilesInterceptor('f', 2), bodykitNest.FileFieldsInterceptor([{ name: 'f' }]), bodykitNest.AnyFilesInterceptor(), bodykitNest.NoFilesInterceptor()]
    // The token's value, from the file Nest's interceptors read it from (the package's index does not export it).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { MULTER_MODULE_OPTIONS } = require('@nestjs/platform-express/multer/files.constants') as { MULTER_MODULE_OPTIONS: string }
    assert.deepEqual(metadataOf(bodykitMade[0]), [[{ index: 0, param: MULTER_MODULE_OPTIONS }], [0]])
    assert.deepEqual(bodykitMade.map(metadataOf), nestMade.map(metadataOf))
    // mixin(): each call is a class of its own, injectable, with a unique name.
    assert.notEqual(bodykitMade[0].name, bodykitNest.FileInterceptor('f').name)
    assert.deepEqual(Reflect.getMetadataKeys(bodykitMade[0]).filter((key) => key === '__injectable__'), ['__injectable__'])
  })

  it('checks the options when the class is made, as multer does (Nest makes it when the app starts)', () => {
    const Interceptor = bodykitNest.FileInterceptor('f', { limits: { fileSize: -1 } })
    assert.throws(() => new Interceptor(), { name: 'TypeError', message: 'Expected limits.fileSize to be a non-negative integer or Infinity' })
    const NestInterceptor = platformExpress.FileInterceptor('f', { limits: { fileSize: -1 } })
    assert.throws(() => new NestInterceptor(), { name: 'TypeError', message: 'Expected limits.fileSize to be a non-negative integer or Infinity' })
  })
})

describe('bodykit/nest: the exception of an upload error', () => {
  it('maps every bodykit/multer error code as Nest maps multer\'s, with and without a field', () => {
    for (const code of [...CODES, 'SOMETHING_ELSE']) {
      for (const field of [undefined, 'avatar', '']) {
        const error = new multer.MulterError(code as multer.ErrorCode, field, 'a.txt')
        assert.deepEqual(describeException(toNestException(error)), describeException(nest.transformException(error)), code + ' ' + field)
      }
    }
    // The codes Nest knows become HttpExceptions; the storage's STREAM_DESTROYED is passed on (its own status then answers).
    assert.deepEqual(describeException(toNestException(new multer.MulterError('LIMIT_FILE_SIZE', 'f'))), {
      class: 'PayloadTooLargeException', status: 413, message: 'File too large', response: { statusCode: 413, message: 'File too large', error: 'Payload Too Large' }
    })
    assert.deepEqual(describeException(toNestException(new multer.MulterError('LIMIT_UNEXPECTED_FILE', 'f'))), {
      class: 'BadRequestException', status: 400, message: 'Unexpected file field - f', response: { statusCode: 400, message: 'Unexpected file field - f', error: 'Bad Request' }
    })
  })

  it('maps busboy\'s errors (as bodykit/multer passes them, with their 400) and bodykit\'s own as Nest maps them', () => {
    const errors: unknown[] = [
      ...BUSBOY_MESSAGES.map((message) => asClientError(new Error(message))),
      ...BUSBOY_MESSAGES.map((message) => new Error(message)),
      unreadableFileName('avatar'),
      createHttpError(400, 'request aborted', { type: 'request.aborted', code: 'ECONNABORTED' }),
      // A filter's own errors: an HttpException is kept; a plain error with one of multer's messages is mapped by it.
      new HttpException('teapot', 418),
      Object.assign(new Error('Too many files'), { field: 'x' }),
      new Error('File too large'),
      null, undefined, 0, '', 'a string', { message: 'Malformed part header' }, { code: 'LIMIT_FILE_SIZE' }, { code: 'toString', message: 'Too many parts' }
    ]
    for (const error of errors) {
      const ours = toNestException(error)
      assert.deepEqual(describeException(ours), describeException(nest.transformException(error)), String((error as Error | null)?.message ?? error))
      if (!(ours instanceof HttpException)) assert.equal(ours, error)
    }
  })

  it('maps drawn errors (codes, messages, fields) as Nest does', () => {
    const text = fc.oneof(fc.constantFrom(...CODES, ...BUSBOY_MESSAGES, 'File too large', 'Too many parts', 'hasOwnProperty', '__proto__'), fc.string({ maxLength: 12 }))
    fc.assert(fc.property(fc.record({ code: fc.option(text, { nil: undefined }), message: fc.option(text, { nil: undefined }), field: fc.option(text, { nil: undefined }) }, { requiredKeys: [] }), (props) => {
      const error = Object.assign(new Error(), props)
      if (props.message === undefined) delete (error as { message?: string }).message
      assert.deepEqual(describeException(toNestException(error)), describeException(nest.transformException(error)))
    }), { numRuns: 500 })
  })
})

/** Options as a route or a module gives them: present, nil, or absent. */
const optionValue = fc.oneof(fc.constant(undefined), fc.constant(null), fc.constantFrom('uploads', 0, false, true, ''))
const limitsValue = fc.oneof(
  fc.constant(undefined), fc.constant(null),
  fc.record({ fileSize: fc.nat(100), parts: fc.oneof(fc.nat(5), fc.constant(undefined), fc.constant(null), fc.constant(Infinity)), files: fc.nat(3) }, { requiredKeys: [] })
)
const optionsArb = fc.record({ dest: optionValue, storage: optionValue, preservePath: optionValue, defParamCharset: optionValue, limits: limitsValue }, { requiredKeys: [] })

/** Options with their `limits` function called (or not one) and their fileFilter reduced to its kind. */
function comparable (options: Record<string, unknown>): Record<string, unknown> {
  const { limits, fileFilter, ...rest } = options
  return { ...rest, limits: typeof limits === 'function' ? { calledWith: (limits as (req: unknown) => unknown)({}) } : limits, fileFilter: typeof fileFilter }
}

describe('bodykit/nest: options', () => {
  it('merges module and route options, nil route values keeping the module\'s, and adds `parts` as Nest does', () => {
    fc.assert(fc.property(fc.option(optionsArb, { nil: undefined }), fc.option(optionsArb, { nil: undefined }), (moduleOptions, localOptions) => {
      assert.deepEqual(comparable(withNestDefaults(mergeUploadOptions(moduleOptions, localOptions))), comparable(nest.applyDefaultLimits(nest.mergeMulterOptions(moduleOptions, localOptions))))
    }), { numRuns: 500 })
    assert.deepEqual(withNestDefaults(mergeUploadOptions({ limits: { fileSize: 1 } }, { limits: undefined })).limits, { fileSize: 1, parts: 1000 })
    assert.deepEqual(withNestDefaults(mergeUploadOptions(null, { limits: { parts: Infinity } })).limits, { parts: Infinity })
  })

  it('adds `parts` to what a `limits` function returns, null included', () => {
    for (const returned of [null, undefined, {}, { parts: 3 }, { parts: null, fileSize: 2 }]) {
      const limits = withNestDefaults({ limits: () => returned }).limits as (req: unknown) => unknown
      const nestLimits = nest.applyDefaultLimits({ limits: () => returned }).limits as (req: unknown) => unknown
      assert.deepEqual(limits({}), nestLimits({}))
    }
    let seen: unknown
    const limits = withNestDefaults({ limits: (req: unknown) => { seen = req; return {} } }).limits as (req: unknown) => unknown
    const req = {}
    limits(req)
    assert.equal(seen, req)
  })
})

type Call = [error: unknown, accept: unknown]
type Behaviour = { kind: 'accept' | 'skip' } | { kind: 'callbackError' | 'throw' | 'reject' | 'acceptThenThrow', value: unknown } | { kind: 'async', accept: boolean }

/** A fileFilter that acts as drawn. */
function filterFor (behaviour: Behaviour): (req: unknown, file: unknown, callback: (error: unknown, accept?: boolean) => void) => unknown {
  return (_req, _file, callback) => {
    switch (behaviour.kind) {
      case 'accept': return callback(null, true)
      case 'skip': return callback(null, false)
      case 'callbackError': return callback(behaviour.value, false)
      case 'throw': throw behaviour.value
      case 'reject': return Promise.reject(behaviour.value)
      case 'acceptThenThrow':
        callback(null, true)
        throw behaviour.value
      case 'async': return Promise.resolve().then(() => callback(null, behaviour.accept))
    }
  }
}

/** The callback calls a guarded filter made, and what it threw, once its promise (if any) settled. */
async function runFilter (guarded: (req: unknown, file: unknown, callback: (error: unknown, accept?: boolean) => void) => unknown): Promise<{ calls: Call[], threw: unknown }> {
  const calls: Call[] = []
  let threw: unknown = 'nothing'
  try {
    guarded({}, {}, (error, accept) => { calls.push([error instanceof Error ? { message: error.message } : error, accept]) })
  } catch (err) {
    threw = err
  }
  await new Promise((resolve) => setImmediate(resolve))
  return { calls, threw }
}

describe('bodykit/nest: the guarded fileFilter', () => {
  const thrown = fc.oneof(fc.constant(new Error('boom')), fc.constantFrom(0, '', null, undefined, false, 'text', 7))
  const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
    fc.record({ kind: fc.constantFrom('accept' as const, 'skip' as const) }),
    fc.record({ kind: fc.constantFrom('callbackError' as const, 'throw' as const, 'reject' as const, 'acceptThenThrow' as const), value: thrown }),
    fc.record({ kind: fc.constant('async' as const), accept: fc.boolean() })
  )

  it('calls back as Nest\'s does: a throw or a rejection before the callback is its error (a falsy one wrapped); a throw after it is rethrown', async () => {
    await fc.assert(fc.asyncProperty(behaviour, async (drawn) => {
      const ours = await runFilter(withNestDefaults({ fileFilter: filterFor(drawn) }).fileFilter as never)
      const theirs = await runFilter(nest.applyDefaultLimits({ fileFilter: filterFor(drawn) }).fileFilter as never)
      assert.deepEqual(ours, theirs)
    }), { numRuns: 300 })
    const falsy = await runFilter(withNestDefaults({ fileFilter: filterFor({ kind: 'throw', value: 0 }) }).fileFilter as never)
    assert.deepEqual(falsy.calls, [[{ message: 'fileFilter failed: 0' }, false]])
  })

  it('ignores a rejection after the filter called back, where Nest\'s rethrows it as an unhandled rejection (a crash by default)', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown): void => { unhandled.push(reason) }
    process.on('unhandledRejection', onUnhandled)
    try {
      const guarded = withNestDefaults({
        fileFilter: async (_req: unknown, _file: unknown, callback: (error: unknown, accept: boolean) => void) => {
          callback(null, true)
          throw new Error('late')
        }
      }).fileFilter as never
      const { calls } = await runFilter(guarded)
      assert.deepEqual(calls, [[null, true]])
      await new Promise((resolve) => setTimeout(resolve, 10))
      assert.deepEqual(unhandled, [])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })
})

describe('bodykit/nest: array gaps', () => {
  /** Drawn bodies: null-prototype objects and sparse arrays, nested. */
  const { tree } = fc.letrec<{ tree: unknown }>((recur) => ({
    tree: fc.oneof({ depthSize: 'small' },
      fc.string({ maxLength: 3 }),
      fc.array(fc.tuple(fc.nat(40), recur('tree')), { maxLength: 4 }).map((slots) => {
        const array: unknown[] = []
        for (const [index, value] of slots) array[index] = value
        return array
      }),
      fc.dictionary(fc.constantFrom('a', 'b', '0', '3'), recur('tree'), { maxKeys: 3 }).map((entries) => Object.assign(Object.create(null), entries))
    )
  }))

  it('closes them as Nest does, keeping the order of the values', () => {
    fc.assert(fc.property(fc.dictionary(fc.constantFrom('x', 'y', 'z'), tree, { maxKeys: 3 }), (entries) => {
      const ours = structuredClone(Object.assign({}, entries))
      const theirs = structuredClone(Object.assign({}, entries))
      closeArrayGaps(ours)
      nest.closeArrayGaps(theirs)
      assert.deepStrictEqual(ours, theirs)
    }), { numRuns: 500 })
    const body = Object.assign(Object.create(null), { tags: Object.assign([], { 7: 'b', 2: 'a' }), deep: { list: Object.assign([], { 4294967294: 'far' }) } })
    closeArrayGaps(body)
    assert.deepEqual({ ...body }, { tags: ['a', 'b'], deep: { list: ['far'] } })
  })
})

describe('bodykit/nest: running the upload', () => {
  /** A run of the upload: whether the response finishes while the body is read, and how the middleware ends. */
  interface Run { finishFirst: boolean, complete: boolean, error: unknown, body: unknown, res: 'stream' | 'stand-in' | 'none' }

  /** What a run did: how often the request was destroyed, how it settled, and the body after it. */
  async function outcomeOf (run: typeof runUpload, drawn: Run): Promise<unknown> {
    const res = drawn.res === 'stream' ? new PassThrough() : drawn.res === 'stand-in' ? {} : undefined
    let destroyed = 0
    const req = { complete: drawn.complete, destroy: () => { destroyed++ }, body: undefined as unknown }
    let callNext: (err?: unknown) => void = () => {}
    const settled = run((_req, _res, next) => { callNext = next }, req, res).then(() => 'resolved', describeException)
    const finish = async (): Promise<void> => {
      if (res instanceof PassThrough) {
        res.resume()
        res.end()
      }
      await new Promise((resolve) => setImmediate(resolve))
    }
    if (drawn.finishFirst) await finish()
    req.body = structuredClone(drawn.body)
    callNext(drawn.error)
    const result = await settled
    if (!drawn.finishFirst) await finish()
    return { destroyed, result, body: req.body }
  }

  it('destroys a request still being read when the response finishes, rejects with the mapped error and closes gaps, as Nest\'s runMulter', async () => {
    const sparse = Object.assign(Object.create(null), { a: Object.assign([], { 3: 'x' }) })
    const drawnRun: fc.Arbitrary<Run> = fc.record({
      finishFirst: fc.boolean(),
      complete: fc.boolean(),
      error: fc.constantFrom(undefined, null, new multer.MulterError('LIMIT_FILE_SIZE', 'f'), asClientError(new Error('Unexpected end of form')), new Error('other')),
      body: fc.constantFrom(undefined, { a: Object.assign([], { 3: 'x' }) }, sparse),
      res: fc.constantFrom('stream' as const, 'stand-in' as const, 'none' as const)
    })
    await fc.assert(fc.asyncProperty(drawnRun, async (drawn) => {
      assert.deepStrictEqual(await outcomeOf(runUpload, drawn), await outcomeOf(nest.runMulter, drawn))
    }), { numRuns: 200 })
    assert.deepEqual(await outcomeOf(runUpload, { finishFirst: true, complete: false, error: undefined, body: undefined, res: 'stream' }), { destroyed: 1, result: 'resolved', body: undefined })
  })
})
