// Consumer fixture (bodykit only): multipart() with files in an Express app, MultipartRequest, and readMultipart in node:http.
import bodykit = require('bodykit')
import legacy = require('bodykit/legacy')
import express = require('express')
import http = require('node:http')

const app = express()

const upload: bodykit.MultipartOptions = {
  extended: true,
  partLimit: 100,
  fieldSizeLimit: '64kb',
  files: { storage: 'disk', directory: '/tmp', fileSizeLimit: '2mb', fileLimit: 1, fieldNames: ['avatar'] }
}
app.post('/avatar', bodykit.multipart(upload), (req: bodykit.MultipartRequest<express.Request>, res) => {
  const file: bodykit.UploadedFile | undefined = req.files?.[0]
  res.json({ name: req.body.name, path: file?.path, size: file?.size, original: file?.originalName })
})
app.post('/legacy', legacy.multipart({ files: true }), (req: legacy.MultipartRequest<express.Request>, res) => {
  res.json({ buffers: req.files?.map((file) => file.buffer?.length) })
})

export const server = http.createServer(async (req, res) => {
  const options: bodykit.ReadMultipartOptions = { files: { storage: 'memory' }, res }
  const result: bodykit.MultipartResult | undefined = await bodykit.readMultipart(req, options)
  res.end(JSON.stringify({ fields: result?.fields, files: result?.files.map((file) => file.fieldName) }))
})
