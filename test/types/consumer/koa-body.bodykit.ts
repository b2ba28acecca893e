// Consumer fixture (bodykit only): koaBody from bodykit/koa in a Koa app typed with @types/koa, as koa-body's users write it:
// HttpMethodEnum in parsedMethods, formidable options with onFileBegin and the other hooks, files read with formidable's fields.
import Koa = require('koa')
import { koaBody, HttpMethodEnum, type KoaBodyFile, type KoaBodyOptions } from 'bodykit/koa'

const app = new Koa()
const options: KoaBodyOptions = {
  multipart: true,
  includeUnparsed: true,
  parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, 'DELETE'],
  jsonLimit: '1mb',
  formidable: {
    uploadDir: '/tmp',
    maxFileSize: 5 * 1024 * 1024,
    maxFiles: 3,
    keepExtensions: true,
    onFileBegin: (name: string, file: KoaBodyFile) => { file.filepath = '/tmp/' + name + '-' + file.newFilename }
  },
  onError: (err: Error, ctx: Koa.Context) => ctx.throw(422, err.message)
}
app.use(koaBody(options))
app.use((ctx) => {
  const files = (ctx.request as Koa.Request & { files?: Record<string, KoaBodyFile | KoaBodyFile[]> }).files ?? {}
  const avatar = files.avatar
  const first: KoaBodyFile | undefined = Array.isArray(avatar) ? avatar[0] : avatar
  ctx.body = { path: first?.filepath, name: first?.originalFilename, type: first?.mimetype, size: first?.size }
})

// formidable's hooks and form-wide limits, as koa-body's users write them, and bodykit's removeFilesAfterResponse.
app.use(koaBody({
  multipart: true,
  removeFilesAfterResponse: true,
  formidable: {
    maxTotalFileSize: 20 * 1024 * 1024,
    maxFieldsSize: 1024 * 1024,
    hashAlgorithm: 'sha256',
    onPart: (part, handlePart) => { if (part.originalFilename !== null) handlePart(part) },
    filter: (part) => part.mimetype?.startsWith('image/') ?? false,
    filename: (name: string, ext: string) => name + ext
  }
}))
app.use((ctx) => {
  const file = (ctx.request as Koa.Request & { files?: Record<string, KoaBodyFile> }).files?.photo
  const hash: string | null | undefined = file?.hash
  ctx.body = { hash }
})

// @ts-expect-error parsedMethods takes koa-body's methods only
koaBody({ parsedMethods: ['OPTIONS'] })

export default app
