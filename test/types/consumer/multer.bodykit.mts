// Consumer fixture (bodykit only): `bodykit/multer` from an ES module, its types as named imports, next to bodykit's own parsers.
import multer, { MulterError, diskStorage, type ErrorCode, type Limits, type LimitsFunction, type Request } from 'bodykit/multer'
import { json } from 'bodykit'
import express from 'express'

const retryable: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['STREAM_DESTROYED'])
const base: Limits = { files: 4, fieldNestingDepth: 2, fieldArrayIndexLimit: 20 }
const limits: LimitsFunction = (req: Request) => ({ ...base, fileSize: req.headers['content-length'] === undefined ? 1e6 : 5e6 })
const upload = multer({ storage: diskStorage({ destination: '/tmp', filename: (_req, file, cb) => cb(null, file.fieldname) }), limits })

const app = express()
app.use(json())
app.post('/gallery', upload.fields([{ name: 'photos', maxCount: 4 }]), (req, res) => {
  const files = req.files as Record<string, Express.Multer.File[]>
  res.json({ count: files.photos?.length ?? 0, title: req.body.title })
})
app.use((err: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
  if (err instanceof MulterError) res.status(err.status).json({ code: err.code, retry: retryable.has(err.code) })
  else next(err)
})

export default app
