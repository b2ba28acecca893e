// Consumer fixture (bodykit only): multer 2.5's options and limits on `bodykit/multer`, its MulterError status, node:http, and what the types refuse.
import multer = require('bodykit/multer')
import express = require('express')
import http = require('node:http')

// multer 2.5's limits on field names, and `limits` as a function of the request (inline, typed, or with Express's Request).
const limits: multer.Limits = { fieldNestingDepth: 4, fieldArrayIndexLimit: 100, fieldSize: 64 * 1024, headerPairs: 100 }
const perPlan: multer.LimitsFunction = (req) => (req.headers['x-plan'] === 'pro' ? { ...limits, fileSize: 100e6 } : { ...limits, fileSize: 5e6 })
const byQuery = (req: express.Request): multer.Limits | null => (req.query.large === '1' ? { fileSize: 1e9 } : null)
const instances: multer.Multer[] = [
  multer({ limits: perPlan, defCharset: 'utf8', defParamCharset: 'utf8', highWaterMark: 64 * 1024, fileHwm: 16 * 1024 }),
  multer({ limits: (req) => (req.user ? { fileSize: Number(req.user.quota) } : undefined) }),
  multer({ limits: byQuery }),
  multer({ storage: multer.diskStorage({ destination: '/tmp', flush: true }) }),
  multer({ storage: multer.diskStorage() }),
  // Every option may be undefined, also with exactOptionalPropertyTypes.
  multer({ storage: undefined, dest: undefined, limits: undefined, preservePath: undefined, defCharset: undefined, streamHandler: undefined }),
  multer({ limits: { fileSize: undefined, fieldNestingDepth: undefined } })
]

// The request callbacks are given: Node's request, Express's members loosely typed.
function folderOf (req: multer.Request): string {
  return String(req.params.folder ?? req.headers['x-folder'] ?? 'uploads')
}
const upload = multer({ storage: multer.diskStorage({ destination: (req, _file, cb) => cb(null, folderOf(req)) }) })

// The middlewares, in Express and as plain functions.
const middleware: multer.Middleware = upload.single('file')
const app = express()
app.put('/files/:folder', middleware, (req, res) => { res.json({ path: req.file?.path, folder: req.params.folder }) })

// MulterError: multer 2.5's codes, the file name, and the status Express answers with.
const messages: Record<multer.ErrorCode, string> = {
  LIMIT_PART_COUNT: 'too many parts',
  LIMIT_FILE_SIZE: 'file too large',
  LIMIT_FILE_COUNT: 'too many files',
  LIMIT_FIELD_KEY: 'field name too long',
  LIMIT_FIELD_VALUE: 'field value too long',
  LIMIT_FIELD_COUNT: 'too many fields',
  LIMIT_UNEXPECTED_FILE: 'unexpected file',
  MISSING_FIELD_NAME: 'field name missing',
  LIMIT_FIELD_NESTING: 'field name nested too deep',
  LIMIT_FIELD_ARRAY_INDEX: 'array index too large',
  STREAM_DESTROYED: 'upload ended',
  INVALID_FIELD_NAME: 'invalid field name'
}
app.use((err: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
  if (!(err instanceof multer.MulterError)) return next(err)
  const status: 400 | 413 = err.status === 413 ? 413 : 400
  res.status(status).json({ error: messages[err.code], field: err.field, file: err.filename, statusCode: err.statusCode })
})
const custom = new multer.MulterError('LIMIT_FILE_SIZE', 'avatar', 'me.png')

const server = http.createServer((req, res) => {
  upload.array('files', 4)(req, res, (err) => {
    res.statusCode = err instanceof multer.MulterError ? err.status : err ? 500 : 200
    res.end()
  })
})

// What the types refuse.
// @ts-expect-error streamHandler is not supported
multer({ streamHandler: () => {} })
// @ts-expect-error a limit is a number
multer({ limits: { fileSize: '5mb' } })
// @ts-expect-error fileFilter's callback takes an error, or null and a boolean
multer({ fileFilter: (_req, _file, cb) => cb(null) })
// @ts-expect-error a field has a name
upload.fields([{ maxCount: 1 }])
// @ts-expect-error the destination callback takes a path
multer.diskStorage({ destination: (_req, _file, cb) => cb(null) })

export = { app, server, instances, custom }
