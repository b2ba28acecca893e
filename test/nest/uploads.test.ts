// bodykit/nest against @nestjs/platform-express 11.2.10: the same requests, over real HTTP, to a Nest app built with
// Nest's upload interceptors and to one built with bodykit/nest's; the status, Nest's JSON answer and what the handler
// saw (every file property but its path, its bytes) must match, and no file may stay on disk after a failed request.
import assert from 'node:assert/strict'
import net from 'node:net'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import zlib from 'node:zlib'
import { buildForm, field, file, formType, type Part } from '../multer/ported-form'
import type http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Body, UploadedFile } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import { MulterModule } from '@nestjs/platform-express'
import { DISK_FILE_SIZE, LIBRARIES, LIMITS, PIPE_MAX_SIZE, appsForSuite, defineController, defineModule, describeUpload, filesIn, post, startNestApp, untilEmpty, type Answer, type NestApp } from './upload-apps'

/** `size` bytes of every value, so that a byte lost or moved shows. */
function bytes (size: number): Buffer {
  return Buffer.from(Array.from({ length: size }, (_, index) => (index * 7) % 256))
}

/** A request of the table: where it goes, its body and Content-Type (null: none), and the status both must answer. */
interface Case {
  name: string
  path: string
  body: Buffer | Buffer[]
  contentType?: string | null
  headers?: Record<string, string>
  status: number
}

const form = (parts: readonly Part[], options?: { close?: boolean }): Buffer => buildForm(parts, options)
const fields = (count: number, prefix = 'f'): Part[] => Array.from({ length: count }, (_, index) => field(prefix + index, 'v' + index))
const raw = (text: string): Part => ({ raw: text })

const CASES: Case[] = [
  // FileInterceptor('file', { limits: LIMITS })
  { name: 'single: a field and a file', path: '/m/single', body: form([field('title', 'Zoë'), file('file', 'notes.txt', 'hello')]), status: 201 },
  { name: 'single: a file of exactly fileSize', path: '/m/single', body: form([file('file', 'a.bin', bytes(LIMITS.fileSize), 'application/octet-stream')]), status: 201 },
  { name: 'single: a file one byte over fileSize', path: '/m/single', body: form([file('file', 'a.bin', bytes(LIMITS.fileSize + 1))]), status: 413 },
  { name: 'single: an empty file, no Content-Type', path: '/m/single', body: form([file('file', 'empty', '', null)]), status: 201 },
  { name: 'single: a file name with a path and a UTF-8 name', path: '/m/single', body: form([file('file', 'dir/sub/Zoë.txt', 'x')]), status: 201 },
  { name: 'single: a second file in the field', path: '/m/single', body: form([file('file', 'a.txt', 'a'), file('file', 'b.txt', 'b')]), status: 400 },
  { name: 'single: a file in another field', path: '/m/single', body: form([file('other', 'a.txt', 'a')]), status: 400 },
  { name: 'single: fields only', path: '/m/single', body: form([field('a', '1'), field('b[]', '2'), field('b[]', '3')]), status: 201 },
  { name: 'single: fields at the limit', path: '/m/single', body: form(fields(LIMITS.fields)), status: 201 },
  { name: 'single: one field over the limit', path: '/m/single', body: form(fields(LIMITS.fields + 1)), status: 400 },
  { name: 'single: a value of exactly fieldSize', path: '/m/single', body: form([field('v', 'x'.repeat(LIMITS.fieldSize))]), status: 201 },
  { name: 'single: a value one byte over fieldSize', path: '/m/single', body: form([field('v', 'x'.repeat(LIMITS.fieldSize + 1))]), status: 400 },
  { name: 'single: a name one byte over fieldNameSize', path: '/m/single', body: form([field('n'.repeat(LIMITS.fieldNameSize + 1), 'x')]), status: 400 },
  { name: 'single: a part without a name', path: '/m/single', body: form([raw('Content-Disposition: form-data\r\n\r\nx')]), status: 400 },
  { name: 'single: a name nested too deep', path: '/m/single', body: form([field('a[b][c][d]', 'x')]), status: 400 },
  { name: 'single: an array index over the limit', path: '/m/single', body: form([field('a[101]', 'x')]), status: 400 },
  // FilesInterceptor('files', 2), FileFieldsInterceptor([a: 1, b: 2]), AnyFilesInterceptor, NoFilesInterceptor (LIMITS)
  { name: 'array: two files', path: '/m/array', body: form([file('files', '1.txt', 'one'), field('x', 'y'), file('files', '2.txt', 'two')]), status: 201 },
  { name: 'array: three files (maxCount 2)', path: '/m/array', body: form([file('files', '1.txt', 'one'), file('files', '2.txt', 'two'), file('files', '3.txt', 'three')]), status: 400 },
  { name: 'multer\'s memoryStorage(): two files', path: '/m/multer-storage', body: form([file('files', '1.txt', 'one'), file('files', '2.txt', bytes(LIMITS.fileSize))]), status: 201 },
  { name: 'multer\'s memoryStorage(): a file over fileSize', path: '/m/multer-storage', body: form([file('files', '1.txt', 'one'), file('files', '2.txt', bytes(LIMITS.fileSize + 1))]), status: 413 },
  { name: 'fields: a, b and b', path: '/m/fields', body: form([file('b', 'b1', 'b1'), file('a', 'a', 'a'), file('b', 'b2', 'b2')]), status: 201 },
  { name: 'fields: a twice', path: '/m/fields', body: form([file('a', 'a1', 'a'), file('a', 'a2', 'a')]), status: 400 },
  { name: 'fields: a field not listed', path: '/m/fields', body: form([file('c', 'c', 'c')]), status: 400 },
  { name: 'any: three files and a field', path: '/m/any', body: form([file('x', '1', '1'), file('y', '2', '2'), field('z', 'z'), file('x', '3', '3')]), status: 201 },
  { name: 'any: four files (files 3)', path: '/m/any', body: form([file('x', '1', '1'), file('x', '2', '2'), file('x', '3', '3'), file('x', '4', '4')]), status: 400 },
  { name: 'any: seven parts (parts 6)', path: '/m/any', body: form([...fields(4), file('x', '1', '1'), file('x', '2', '2'), file('x', '3', '3')]), status: 400 },
  { name: 'none: fields whose arrays have gaps', path: '/m/none', body: form([field('tags[5]', 'b'), field('tags[2]', 'a'), field('x[k][9]', 'deep'), field('x[k][1]', 'first')]), status: 201 },
  { name: 'none: a file', path: '/m/none', body: form([field('a', '1'), file('f', 'f.txt', 'f')]), status: 400 },
  // Nest's default `parts` (1000): without limits, and under a `limits` function (returning limits or null).
  { name: 'unlimited: 1000 parts', path: '/m/unlimited', body: form(fields(1000)), status: 201 },
  { name: 'unlimited: 1001 parts', path: '/m/unlimited', body: form(fields(1001)), status: 400 },
  { name: 'limits function: a file over its fileSize', path: '/m/limits-function', body: form([file('f', 'f', bytes(17))]), status: 413 },
  { name: 'limits function: 1001 parts', path: '/m/limits-function', body: form(fields(1001)), status: 400 },
  { name: 'limits function returning null: 1001 parts', path: '/m/limits-function-null', body: form(fields(1001)), status: 400 },
  // Malformed bodies and other Content-Types.
  { name: 'no boundary in the Content-Type', path: '/m/single', body: form([field('a', '1')]), contentType: 'multipart/form-data', status: 400 },
  { name: 'a body cut in a file', path: '/m/single', body: form([field('a', '1'), file('file', 'a.txt', 'abc')], { close: false }).subarray(0, -3), status: 400 },
  { name: 'a body without its closing delimiter', path: '/m/single', body: form([field('a', '1')], { close: false }), status: 400 },
  { name: 'a part header without a colon', path: '/m/single', body: form([raw('Content-Disposition form-data; name="a"\r\n\r\nx')]), status: 400 },
  { name: 'an empty body', path: '/m/single', body: Buffer.alloc(0), status: 400 },
  { name: 'a preamble and an epilogue', path: '/m/single', body: Buffer.concat([Buffer.from('preamble\r\n'), form([field('a', '1')]), Buffer.from('epilogue')]), status: 201 },
  { name: 'a JSON body (not multipart: Nest\'s JSON parser reads it)', path: '/m/single', body: Buffer.from('{"a":[1]}'), contentType: 'application/json', status: 201 },
  { name: 'no Content-Type', path: '/m/single', body: Buffer.from('x'), contentType: null, status: 201 },
  // fileFilters that throw, reject (async), call back with an error or skip.
  ...['filter', 'async-filter'].flatMap((route): Case[] => [
    { name: `${route}: every file stored`, path: '/m/' + route, body: form([file('files', 'ok.txt', 'ok'), file('files', 'ok2.txt', 'ok2')]), status: 201 },
    { name: `${route}: a file skipped`, path: '/m/' + route, body: form([file('files', 'skip.txt', 'skip'), file('files', 'ok.txt', 'ok')]), status: 201 },
    { name: `${route}: throws an HttpException`, path: '/m/' + route, body: form([file('files', 'ok.txt', 'ok'), file('files', 'throw-http.txt', 'x')]), status: 400 },
    { name: `${route}: throws an Error`, path: '/m/' + route, body: form([file('files', 'throw-error.txt', 'x')]), status: 500 },
    { name: `${route}: throws 0`, path: '/m/' + route, body: form([file('files', 'throw-falsy.txt', 'x')]), status: 500 },
    { name: `${route}: calls back with an HttpException`, path: '/m/' + route, body: form([file('files', 'callback-http.txt', 'x')]), status: 400 },
    { name: `${route}: calls back with an Error of a multer message`, path: '/m/' + route, body: form([file('files', 'callback-multer-message.txt', 'x')]), status: 400 }
  ]),
  // Disk routes: MulterModule.register({ dest, limits: { fileSize: DISK_FILE_SIZE } }).
  { name: 'disk: a file', path: '/d/single', body: form([field('a', '1'), file('file', 'disk.bin', bytes(DISK_FILE_SIZE))]), status: 201 },
  { name: 'disk: a file over the module\'s fileSize', path: '/d/single', body: form([file('file', 'disk.bin', bytes(DISK_FILE_SIZE + 1))]), status: 413 },
  { name: 'disk: nil route options keep the module\'s (a file)', path: '/d/nil-options', body: form([file('file', 'disk.bin', 'on disk')]), status: 201 },
  { name: 'disk: nil route options keep the module\'s (fileSize)', path: '/d/nil-options', body: form([file('file', 'disk.bin', bytes(DISK_FILE_SIZE + 1))]), status: 413 },
  { name: 'disk: three files', path: '/d/array', body: form([file('files', '1', bytes(10)), file('files', '2', bytes(20)), file('files', '3', bytes(30))]), status: 201 },
  { name: 'disk: four files (maxCount 3) after three stored', path: '/d/array', body: form([file('files', '1', bytes(10)), file('files', '2', bytes(20)), file('files', '3', bytes(30)), file('files', '4', bytes(1))]), status: 400 },
  { name: 'disk: fields a and b', path: '/d/fields', body: form([file('a', 'a', bytes(5)), file('b', 'b', bytes(6)), file('b', 'b', bytes(7))]), status: 201 },
  { name: 'disk: a body cut after a stored file', path: '/d/fields', body: form([file('a', 'a', bytes(5)), file('b', 'b', bytes(6))], { close: false }), status: 400 },
  { name: 'disk: a file ParseFilePipe accepts', path: '/d/pipe', body: form([file('file', 'small.txt', bytes(PIPE_MAX_SIZE - 1))]), status: 201 },
  { name: 'disk: a file ParseFilePipe refuses (MaxFileSizeValidator)', path: '/d/pipe', body: form([file('file', 'large.txt', bytes(PIPE_MAX_SIZE + 5))]), status: 400 },
  { name: 'disk: no file for ParseFilePipe', path: '/d/pipe', body: form([field('a', '1')]), status: 400 }
]

/** Sends a case to an app: its Content-Type unless it says otherwise. */
function send (app: NestApp, request: Case): Promise<Answer> {
  const headers: Record<string, string> = { ...request.headers }
  if (request.contentType !== null) headers['content-type'] = request.contentType ?? formType()
  return post(app.port, request.path, request.body, headers)
}

describe('bodykit/nest and Nest\'s interceptors answer the same requests alike', () => {
  const apps = appsForSuite(before, after)

  for (const request of CASES) {
    it(request.name, async () => {
      const answers: Answer[] = []
      for (const app of apps) {
        answers.push(await send(app, request))
        // Every file of a failed request is removed (a refused one once its answer is out); a successful one's handler removed its own.
        assert.deepEqual(await untilEmpty(app.dir), [], app.name + ' left files')
      }
      assert.deepEqual(answers[1], answers[0])
      assert.equal(answers[0].status, request.status, JSON.stringify(answers[0].json))
    })
  }
})

describe('bodykit/nest differs from Nest\'s interceptors only where bodykit/multer differs from multer (docs/multer.md)', () => {
  const apps = appsForSuite(before, after)

  /** The answers of Nest's app and bodykit's to one request. */
  async function both (request: Case): Promise<{ nest: Answer, bodykit: Answer }> {
    return { nest: await send(apps[0], request), bodykit: await send(apps[1], request) }
  }

  it('a multipart type busboy refuses: bodykit/multer\'s error carries a 400, which Nest\'s exception filter answers (multer\'s has none: 500)', async () => {
    const contentType = 'multipart/mixed; boundary=' + formType().split('=')[1]
    const { nest, bodykit } = await both({ name: '', path: '/m/single', body: form([field('a', '1')]), contentType, status: 0 })
    assert.deepEqual(nest, { status: 500, json: { statusCode: 500, message: 'Internal server error' } })
    // Nest answers an error with a `statusCode` (http-errors' convention) with that status and its message.
    assert.deepEqual(bodykit, { status: 400, json: { statusCode: 400, message: 'Unsupported content type: ' + contentType } })
  })

  it('a file whose filename* cannot be read and which has no plain filename: refused with a 400 (multer skips the file: 201)', async () => {
    const body = form([{ name: 'file', filenameStar: "UTF-8''%E0%A4%A", data: 'x', type: 'text/plain' }])
    const { nest, bodykit } = await both({ name: '', path: '/m/single', body, status: 0 })
    assert.deepEqual(nest, { status: 201, json: { body: {}, bodyPrototype: 'null' } })
    assert.deepEqual(bodykit, { status: 400, json: { statusCode: 400, message: 'Malformed filename* in field "file"' } })
    // With a plain filename too, bodykit/multer keeps the file under it (RFC 6266 §4.3), where multer skips it.
    const withPlain = form([{ name: 'file', filename: 'plain.txt', filenameStar: "UTF-8''%E0%A4%A", data: 'x', type: 'text/plain' }])
    const answers = await both({ name: '', path: '/m/single', body: withPlain, status: 0 })
    assert.deepEqual([answers.nest.status, answers.bodykit.status, (answers.bodykit.json as { file: { originalname: string } }).file.originalname], [201, 201, 'plain.txt'])
    assert.equal((answers.nest.json as { file?: unknown }).file, undefined)
  })

  it('a gzip-encoded form: inflated and read (multer hands the compressed bytes to busboy: 400)', async () => {
    const body = zlib.gzipSync(form([field('a', '1'), file('file', 'z.txt', 'zipped')]))
    const { nest, bodykit } = await both({ name: '', path: '/m/single', body, headers: { 'content-encoding': 'gzip' }, status: 0 })
    assert.deepEqual(nest, { status: 400, json: { statusCode: 400, message: 'Multipart: Unexpected end of form', error: 'Bad Request' } })
    assert.equal(bodykit.status, 201)
    assert.deepEqual((bodykit.json as { body: unknown }).body, { a: '1' })
  })
})

/**
 * Opens a connection and writes a request head and the start of a form: a file of which `sent` bytes come. The body is
 * declared as 1 MiB, too large for bodykit's small-body path (which reads a body whole before its parts), so the file is
 * begun on disk as its bytes arrive.
 */
async function startUpload (port: number, urlPath: string, sent: number): Promise<net.Socket> {
  const head = Buffer.from('--' + formType().split('=')[1] + '\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n')
  const socket = net.connect(port, '127.0.0.1')
  socket.on('error', () => {})
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(`POST ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${formType()}\r\nContent-Length: ${1024 * 1024}\r\n\r\n`)
  socket.write(Buffer.concat([head, bytes(sent)]))
  return socket
}

/** Resolves once a file is in the folder (the upload is being written), or fails after 2 s. */
async function untilAFileIn (dir: string): Promise<void> {
  const deadline = Date.now() + 2000
  while (filesIn(dir).length === 0) {
    assert.ok(Date.now() < deadline, 'no file was begun in ' + dir)
    await sleep(5)
  }
}

describe('bodykit/nest leaves no file behind', () => {
  for (const library of LIBRARIES) {
    it(`${library.name}: a client that aborts in the middle of a file`, async (t) => {
      const app = await startNestApp(t, library)
      const socket = await startUpload(app.port, '/d/single', 40)
      await untilAFileIn(app.dir)
      socket.destroy()
      assert.deepEqual(await untilEmpty(app.dir), [])
    })

    it(`${library.name}: a response sent while the file is read (an interceptor bound before answered): the request is destroyed`, async (t) => {
      const app = await startNestApp(t, library)
      const socket = await startUpload(app.port, '/d/answered-first', 40)
      await untilAFileIn(app.dir)
      const received: Buffer[] = []
      socket.on('data', (chunk: Buffer) => received.push(chunk))
      await new Promise((resolve) => socket.once('close', resolve))
      assert.match(Buffer.concat(received).toString('latin1'), /^HTTP\/1\.1 503 [^]*"answered first"/)
      assert.deepEqual(await untilEmpty(app.dir), [])
    })

    it(`${library.name}: a file ParseFilePipe refuses is removed once the answer is out, on a kept-alive connection too`, async (t) => {
      const app = await startNestApp(t, library)
      const body = form([file('file', 'large.txt', bytes(PIPE_MAX_SIZE + 1))])
      const socket = net.connect(app.port, '127.0.0.1')
      t.after(() => { socket.destroy() })
      const received: Buffer[] = []
      socket.on('data', (chunk: Buffer) => received.push(chunk))
      socket.write(Buffer.concat([Buffer.from(`POST /d/pipe HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${formType()}\r\nContent-Length: ${body.length}\r\n\r\n`), body]))
      while (!Buffer.concat(received).toString('latin1').includes('Validation failed')) await sleep(5)
      assert.deepEqual(await untilEmpty(app.dir), [])
    })
  }
})

describe('MulterModule.registerAsync() configures bodykit/nest\'s interceptors as Nest\'s', () => {
  for (const library of LIBRARIES) {
    it(library.name + ': the factory\'s options, the route\'s on top', async (t) => {
      const { FileInterceptor } = library.interceptors
      const handle = (body: unknown, file: unknown): unknown => describeUpload(body, file)
      const routes = [
        { path: 'module', interceptors: [FileInterceptor('file')], params: [Body(), UploadedFile()], handle },
        { path: 'route', interceptors: [FileInterceptor('file', { limits: { fileSize: 8 } })], params: [Body(), UploadedFile()], handle }
      ]
      const AppModule = defineModule({
        imports: [MulterModule.registerAsync({ useFactory: async () => ({ limits: { fileSize: 4 }, preservePath: true }) })],
        controllers: [defineController('async', routes)]
      })
      const app = await NestFactory.create(AppModule, { logger: false })
      await app.listen(0, '127.0.0.1')
      t.after(() => app.close())
      const port = ((app.getHttpServer() as http.Server).address() as AddressInfo).port
      const upload = (urlPath: string, size: number): Promise<Answer> => post(port, urlPath, form([file('file', 'dir/f.txt', bytes(size))]), { 'content-type': formType() })
      const answers = [await upload('/async/module', 4), await upload('/async/module', 5), await upload('/async/route', 8), await upload('/async/route', 9)]
      assert.deepEqual(answers.map((answer) => answer.status), [201, 413, 201, 413])
      // preservePath from the factory: the client's path is kept on both routes.
      assert.deepEqual([answers[0], answers[2]].map((answer) => (answer.json as { file: { originalname: string } }).file.originalname), ['dir/f.txt', 'dir/f.txt'])
    })
  }
})

describe('the entry', () => {
  it('loads neither multer nor @nestjs/platform-express, and require(\'bodykit\') loads no @nestjs/* nor rxjs', async () => {
    const { execFileSync } = await import('node:child_process')
    const loaded = (entry: string): string[] => JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '-e',
      `require(${JSON.stringify(entry)}); console.log(JSON.stringify(Object.keys(require.cache).filter((file) => file.includes('node_modules')).map((file) => file.split('node_modules/').pop().split('/').slice(0, 2).join('/'))))`
    ], { encoding: 'utf8' })) as string[]
    const nestEntry = new Set(loaded(require.resolve('../../src/nest')))
    assert.ok(nestEntry.has('@nestjs/common') && nestEntry.has('rxjs/dist'), [...nestEntry].join(', '))
    assert.deepEqual([...nestEntry].filter((name) => /^(multer|@nestjs\/(core|platform-express))\b/.test(name)), [])
    const defaultEntry = loaded(require.resolve('../../src/index'))
    assert.deepEqual(defaultEntry.filter((name) => /^(@nestjs|rxjs|multer)\b/.test(name)), [])
  })
})
