// Consumer fixture (shared with multer + @types/multer): multer as TypeScript apps use it, with `Express.Multer.File`, `req.file` and `req.files`.
import multer = require('bodykit/multer')
import express = require('express')
import crypto = require('node:crypto')
import fs = require('node:fs')
import path = require('node:path')

type DestinationCallback = (error: Error | null, destination: string) => void
type FileNameCallback = (error: Error | null, filename: string) => void

// A custom storage engine, as multer's StorageEngine.md writes one (here with Express's Request).
class HashingStorage implements multer.StorageEngine {
  constructor (private readonly directory: string) {}

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the callback's type as @types/multer declares it
  _handleFile (req: express.Request, file: Express.Multer.File, callback: (error?: any, info?: Partial<Express.Multer.File>) => void): void {
    const hash = crypto.createHash('sha256')
    const target = path.join(this.directory, `${req.params.id ?? 'anonymous'}-${Date.now()}`)
    const out = fs.createWriteStream(target)
    file.stream.on('data', (chunk: Buffer) => hash.update(chunk))
    file.stream.pipe(out)
    out.on('error', callback)
    out.on('finish', () => { callback(null, { path: target, size: out.bytesWritten, filename: hash.digest('hex') }) })
  }

  _removeFile (_req: express.Request, file: Express.Multer.File, callback: (error: Error | null) => void): void {
    fs.unlink(file.path, callback)
  }
}

// An engine as an object literal: the callbacks' parameters are inferred.
const discard: multer.StorageEngine = {
  _handleFile (req, file, callback) {
    file.stream.resume()
    file.stream.on('end', () => { callback(null, { size: 0, destination: String(req.body.folder ?? '') }) })
  },
  _removeFile (_req, _file, callback) {
    callback(null)
  }
}

// diskStorage with inline callbacks, and with callbacks typed as NestJS apps type them.
const storage = multer.diskStorage({
  destination: (req, _file, cb) => {
    const dir = path.join('/tmp/uploads', String(req.params.userId ?? 'shared'))
    fs.mkdirSync(dir, { recursive: true })
    cb(null, dir)
  },
  filename: (_req, file, cb) => {
    const unique = `${Date.now()}-${Math.round(Math.random() * 1e9)}`
    cb(null, `${file.fieldname}-${unique}${path.extname(file.originalname)}`)
  }
})
const diskOptions: multer.DiskStorageOptions = {
  destination: (req: express.Request, _file: Express.Multer.File, callback: DestinationCallback): void => {
    callback(null, req.body.folder ?? '/tmp')
  },
  filename (_req: express.Request, file: Express.Multer.File, callback: FileNameCallback): void {
    callback(null, crypto.randomUUID() + path.extname(file.originalname))
  }
}
const byFolder = multer.diskStorage(diskOptions)
const plainFolder = multer.diskStorage({ destination: '/tmp/uploads' })

// fileFilter as a named function and inline.
function imagesOnly (_req: express.Request, file: Express.Multer.File, cb: multer.FileFilterCallback): void {
  if (file.mimetype.startsWith('image/')) cb(null, true)
  else cb(new Error('Only images are allowed'))
}

const options: multer.Options = {
  storage,
  fileFilter: imagesOnly,
  limits: { fileSize: 5 * 1024 * 1024, files: 3, fields: 20, fieldNameSize: 100, fieldSize: 1024, parts: 30, headerPairs: 200 },
  preservePath: false,
  defParamCharset: 'utf8'
}
const upload: multer.Multer = multer(options)
const memory = multer({
  storage: multer.memoryStorage(),
  fileFilter: (req, file, cb) => {
    if (req.query.strict === '1' && file.originalname.endsWith('.exe')) return cb(new multer.MulterError('LIMIT_UNEXPECTED_FILE', file.fieldname))
    cb(null, true)
  }
})
const others = [multer(), multer({ dest: 'uploads/' }), multer({ storage: new HashingStorage('/tmp') }), multer({ storage: discard }), multer({ storage: byFolder }), multer({ storage: plainFolder })]

const app = express()
const router = express.Router()

app.post('/profile', memory.single('avatar'), (req, res) => {
  const bytes: Buffer = req.file!.buffer
  res.json({ size: bytes.length, name: req.body.name, type: req.file?.mimetype })
})
app.post('/photos/upload', upload.array('photos', 12), (req, res) => {
  const files = req.files as Express.Multer.File[]
  res.json(files.map((file) => ({ path: file.path, name: file.filename, size: file.size })))
})
const fields: multer.Field[] = [{ name: 'avatar', maxCount: 1 }, { name: 'gallery', maxCount: 8 }, { name: 'extra' }]
app.post('/cool-profile', upload.fields(fields), (req, res) => {
  const files = req.files as { [fieldname: string]: Express.Multer.File[] }
  res.json({ avatar: files['avatar']?.[0]?.path, gallery: files.gallery?.length })
})
router.post('/form', multer().none(), (req, res) => { res.json(req.body) })
router.post('/anything', others[0].any(), (req, res) => {
  const files = Array.isArray(req.files) ? req.files : Object.values(req.files ?? {}).flat()
  res.json(files.map((file: Express.Multer.File) => file.originalname))
})
app.use('/api', router)

// A middleware as a value, and called by hand to answer its errors in place.
const single: express.RequestHandler = upload.single('document')
app.post('/document', (req, res, next) => {
  single(req, res, (err) => {
    if (err instanceof multer.MulterError) {
      res.status(400).json({ code: err.code, field: err.field })
      return
    }
    if (err) return next(err)
    res.send(req.file?.originalname)
  })
})

// The error handler: MulterError and its codes.
function describe (code: multer.ErrorCode): string {
  return code === 'LIMIT_FILE_SIZE' ? 'file too large' : code
}
const onUploadError: express.ErrorRequestHandler = (err, _req, res, next) => {
  if (err instanceof multer.MulterError) {
    res.status(err.code === 'LIMIT_FILE_SIZE' ? 413 : 400).json({ error: describe(err.code), field: err.field, message: err.message, name: err.name })
    return
  }
  next(err)
}
app.use(onUploadError)

// The global augmentation, without express.
function fileNames (req: Express.Request): string[] {
  if (req.file) return [req.file.originalname]
  if (Array.isArray(req.files)) return req.files.map((file) => file.originalname)
  return Object.keys(req.files ?? {})
}
const fileNameOf = (file: Express.Multer.File): string => file.filename

export = { app, fileNames, fileNameOf, MulterError: multer.MulterError }
