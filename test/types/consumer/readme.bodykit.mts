// Consumer fixture (bodykit only): the error handler of docs/typescript.md, verbatim.
import express from 'express'
import { isBodyParserError, json } from 'bodykit'

const app = express()
app.use(json())

app.use((err: unknown, req: express.Request, res: express.Response, next: express.NextFunction) => {
  if (!isBodyParserError(err)) {
    next(err) // not a body-parsing error
    return
  }
  switch (err.type) {
    case 'entity.too.large':
      res.status(413).json({ error: 'body too large', limit: err.limit })
      break
    case 'entity.parse.failed':
      res.status(400).json({ error: 'invalid JSON' })
      break
    case undefined: // zlib's error: a corrupt compressed body (err.code is e.g. 'Z_DATA_ERROR')
      res.status(400).json({ error: 'corrupt compressed body' })
      break
    default:
      res.status(err.status).json({ error: err.type })
  }
})

export default app
