// Type tests of the public API, checked by `tsc -p tsconfig.json` only (never run; not a *.test.ts).
// Each `@ts-expect-error` line must stay an error: if the types start accepting it, tsc fails.
import type { IncomingMessage, ServerResponse } from 'node:http'
import express from 'express'
import bodykit, { json, raw, readJson, readRaw, readText, readUrlencoded, text, urlencoded } from '../../src/index'
import legacy from '../../src/legacy'
import multer from '../../src/multer'
import type { MulterErrorCode } from '../../src/multer/multer-error'

type Middleware = bodykit.Middleware

// Every option of every parser, with its documented type.
const verify = (req: IncomingMessage, res: ServerResponse, buf: Buffer, encoding: string | null): void => {
  if (buf.length > 1e6 && encoding === null && req.method === 'PUT') res.statusCode = 413
}
const jsonOptions: bodykit.JsonOptions = {
  inflate: true,
  limit: '1mb',
  type: 'application/json',
  verify,
  reviver: (key, value) => (key === 'date' ? new Date(String(value)) : value),
  strict: false,
  defaultCharset: 'utf-8'
}
const rawOptions: bodykit.RawOptions = { inflate: false, limit: 1024, type: ['application/octet-stream', 'image/*'], verify }
const textOptions: bodykit.TextOptions = { defaultCharset: 'iso-8859-1', type: (req) => req.headers['content-type'] === 'text/csv', limit: '10kb' }
const urlencodedOptions: bodykit.UrlencodedOptions = {
  extended: true,
  parameterLimit: 50,
  depth: 5,
  defaultCharset: 'iso-8859-1',
  charsetSentinel: true,
  interpretNumericEntities: true,
  inflate: true,
  limit: 2048,
  type: '*/x-www-form-urlencoded',
  verify
}
const legacyUrlencodedOptions: legacy.UrlencodedOptions = { extended: false, parameterLimit: 10, depth: 3, limit: '5kb' }

// The factories take their options, nothing, undefined or null, and return a middleware.
const middlewares: Middleware[] = [
  json(jsonOptions), json(), json(undefined), json(null),
  raw(rawOptions), text(textOptions), urlencoded(urlencodedOptions), urlencoded({ extended: false }),
  bodykit.json(), bodykit.urlencoded({ extended: true }),
  legacy.json(jsonOptions), legacy.raw(rawOptions), legacy.text(textOptions), legacy.urlencoded(legacyUrlencodedOptions),
  legacy({ extended: true, limit: '1mb', strict: false, parameterLimit: 10 }), legacy(), legacy(null),
  raw({ discardLimit: '16mb', discardTime: 60_000 }), legacy.text({ discardLimit: Infinity, discardTime: undefined })
]
const asFunction: (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void = middlewares[0]

// The default module is callable only to throw.
const never: () => never = bodykit

// Wrong option types are rejected.
// @ts-expect-error inflate is a boolean
json({ inflate: 'yes' })
// @ts-expect-error limit is a number or a string
json({ limit: true })
// @ts-expect-error strict is a boolean
json({ strict: 1 })
// @ts-expect-error reviver is a function
json({ reviver: 'revive' })
// @ts-expect-error verify is a function
json({ verify: 'check' })
// @ts-expect-error type is a string, a list of strings or a function
json({ type: 42 })
// @ts-expect-error discardTime is a number of milliseconds
json({ discardTime: '30s' })
// @ts-expect-error unknown options are rejected
json({ strictt: true })
// @ts-expect-error raw has no reviver
raw({ reviver: (_key: string, value: unknown) => value })
// @ts-expect-error raw has no defaultCharset
raw({ defaultCharset: 'utf-8' })
// @ts-expect-error text has no strict
text({ strict: false })
// @ts-expect-error extended is a boolean
urlencoded({ extended: 'true' })
// @ts-expect-error parameterLimit is a number
urlencoded({ parameterLimit: '10' })
// @ts-expect-error depth is a number
urlencoded({ depth: '5' })
// @ts-expect-error charsetSentinel is a boolean
urlencoded({ charsetSentinel: 'yes' })
// @ts-expect-error the factories take an object
urlencoded('extended')

// The legacy urlencoded parser has none of the charset options of the default entry.
// @ts-expect-error legacy urlencoded has no charsetSentinel
legacy.urlencoded({ extended: true, charsetSentinel: true })
// @ts-expect-error legacy urlencoded has no interpretNumericEntities
legacy.urlencoded({ extended: true, interpretNumericEntities: true })
// @ts-expect-error legacy urlencoded has no defaultCharset
legacy.urlencoded({ extended: true, defaultCharset: 'iso-8859-1' })
// @ts-expect-error legacy's generic takes an options object
legacy('json')

// The middlewares plug into Express 5's types, app-wide and per route.
const app = express()
app.use(json())
app.use(urlencoded({ extended: false }))
app.use('/raw', raw({ type: 'application/vnd.custom-type' }))
const router = express.Router()
router.post('/login', urlencoded({ extended: false }), (req, res) => {
  res.json(req.body)
})
router.post('/text', text({ type: 'text/html' }), legacy.json(), (req, res) => {
  res.send(typeof req.body)
})
app.use(router)
app.use(legacy.json({ limit: 10 }))

// bodykit's own options: rawBody on every parser, the poisoning actions on json, in both entries.
const webhookOptions: bodykit.JsonOptions = { rawBody: true, onProtoPoisoning: 'error', onConstructorPoisoning: 'remove' }
const actions: bodykit.PoisoningAction[] = ['ignore', 'remove', 'error']
const ownOptions: Middleware[] = [
  json(webhookOptions), raw({ rawBody: false }), text({ rawBody: undefined }), urlencoded({ rawBody: true }),
  legacy.json({ rawBody: true, onProtoPoisoning: 'ignore' }), legacy.raw({ rawBody: true }), legacy({ rawBody: true })
]
// @ts-expect-error rawBody is a boolean
json({ rawBody: 'yes' })
// @ts-expect-error onProtoPoisoning is 'ignore', 'remove' or 'error'
json({ onProtoPoisoning: 'drop' })
// @ts-expect-error the poisoning options are json's
urlencoded({ onConstructorPoisoning: 'error' })

// RawBodyRequest types req.rawBody on any request type, without a global augmentation.
app.post('/webhook', json({ rawBody: true }), (req: bodykit.RawBodyRequest<express.Request>, res) => {
  const bytes: Buffer | undefined = req.rawBody
  res.send(bytes?.length)
})
const legacyRequest: legacy.RawBodyRequest = {} as IncomingMessage
// @ts-expect-error rawBody is not on a plain request
const untyped: Buffer | undefined = ({} as express.Request).rawBody

// The promise API: request, options (with res) and the resolved types.
async function readAll (req: IncomingMessage, res: ServerResponse): Promise<void> {
  const parsed: unknown = await readJson(req, { ...webhookOptions, res })
  const bytes: Buffer | undefined = await readRaw(req, { limit: '1mb', type: 'application/pdf' })
  const textBody: string | undefined = await readText(req)
  const form: Record<string, unknown> | undefined = await readUrlencoded(req, { extended: true, res })
  const viaDefault: unknown = await bodykit.readJson(req, null)
  const options: bodykit.ReadJsonOptions = { res, limit: 10 }
  const others: [bodykit.ReadOptions, bodykit.ReadRawOptions, bodykit.ReadTextOptions, bodykit.ReadUrlencodedOptions] = [{ res }, { res }, { res }, { res, extended: false }]
  // @ts-expect-error res is a ServerResponse
  await readJson(req, { res: 'response' })
  // @ts-expect-error readText has no reviver
  await readText(req, { reviver: (_key: string, value: unknown) => value })
  void [parsed, bytes, textBody, form, viaDefault, options, others]
}


// A Web Request is read as a Node request is, with the same options and resolved types.
async function readWeb (request: Request): Promise<void> {
  const parsed: unknown = await readJson(request, { limit: '1mb' })
  const bytes: Buffer | undefined = await readRaw(request)
  const textBody: string | undefined = await readText(request, { defaultCharset: 'utf-8' })
  const form: Record<string, unknown> | undefined = await readUrlencoded(request, { extended: true })
  const upload = await bodykit.readMultipart(request, { files: { storage: 'memory' } })
  // @ts-expect-error without a schema, the form may be undefined (nothing to read)
  void upload.fields
  // With a schema: always a form, its fields the schema's output.
  const typedForm = await bodykit.readMultipart(request, { schema: {} as bodykit.StandardSchemaV1<unknown, { name: string }> })
  const name: string = typedForm.fields.name
  const files: bodykit.UploadedFile[] = typedForm.files
  const webRequest: bodykit.WebRequest = request
  // @ts-expect-error a plain object is not a request
  await readJson({ headers: {} })
  void [parsed, bytes, textBody, form, upload?.files, webRequest, name, files]
}
void readWeb

// The error guard narrows to a union discriminated by `type`; extra properties need narrowing first.
declare const failure: unknown
if (bodykit.isBodyParserError(failure)) {
  const status: number = failure.status
  // @ts-expect-error only entity.too.large errors have `limit`
  console.log(status, failure.limit)
  if (failure.type === 'entity.too.large') console.log(failure.limit)
}
// @ts-expect-error not an error type of bodykit
const unknownType: bodykit.BodyParserErrorType = 'entity.unknown'
// @ts-expect-error the guard takes one value
legacy.isBodyParserError()

// @types/body-parser's names are the same types as bodykit's.
const sameJson: bodykit.OptionsJson = jsonOptions
const sameForm: legacy.OptionsUrlencoded = legacyUrlencodedOptions
// @ts-expect-error legacy's OptionsUrlencoded has no charsetSentinel
const legacyForm: legacy.OptionsUrlencoded = { charsetSentinel: true }
const modules: [bodykit.BodyParser, legacy.BodyParser] = [bodykit, legacy]

// bodykit/multer: the published ErrorCode is every code MulterError makes, no more.
const publicCode: multer.ErrorCode = 'LIMIT_FILE_SIZE' as MulterErrorCode
const internalCode: MulterErrorCode = 'LIMIT_FIELD_NESTING' as multer.ErrorCode
// Its middlewares are bodykit's, in Express's routes; its callbacks take Express's Request too.
const upload: multer.Multer = multer({ storage: multer.memoryStorage(), limits: (req: express.Request) => (req.query.big ? null : { fileSize: 1024 }) })
const multerMiddlewares: Middleware[] = [upload.single('a'), upload.array('b', 2), upload.fields([{ name: 'c' }]), upload.none(), upload.any()]
router.post('/avatar', upload.single('avatar'), (req, res) => { res.send(req.file?.size) })
// @ts-expect-error limits are numbers
multer({ limits: { files: '2' } })
// @ts-expect-error memoryStorage takes no options
multer.memoryStorage({ limit: 1 })

export const checked = {
  middlewares, asFunction, never, app, unknownType, sameJson, sameForm, legacyForm, modules, actions, ownOptions, legacyRequest, untyped, readAll,
  publicCode, internalCode, multerMiddlewares
}
