// Consumer fixture (shared with multer + @types/multer): an ES module importing multer, default and named.
import multer, { diskStorage, memoryStorage, MulterError, type FileFilterCallback, type Options, type StorageEngine } from 'bodykit/multer'
import express from 'express'

const filter = (_req: express.Request, file: Express.Multer.File, cb: FileFilterCallback): void => {
  cb(null, file.mimetype !== 'application/x-msdownload')
}
const storage: StorageEngine = process.env.DISK ? diskStorage({ destination: '/tmp' }) : memoryStorage()
const options: Options = { storage, fileFilter: filter, limits: { fileSize: 1024 * 1024 } }
const upload = multer(options)

const app = express()
app.post('/upload', upload.single('file'), (req, res) => {
  res.json({ name: req.file?.originalname, body: req.body })
})
app.use((err: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
  if (err instanceof MulterError) res.status(400).send(err.code)
  else next(err)
})

export default app
