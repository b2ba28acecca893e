// Consumer fixture (bodykit only): the guard and error types as named ESM imports, from both entries.
import express from 'express'
import { isBodyParserError, json, type BodyParserError, type BodyParserErrorType } from 'bodykit'
import legacy, { isBodyParserError as isLegacyError } from 'bodykit/legacy'

const statusOf = (err: BodyParserError): number => err.status
const retryable = new Set<BodyParserErrorType>(['request.aborted', 'request.size.invalid'])

const app = express()
app.use(json(), legacy.text())
app.use((err: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
  if (isBodyParserError(err) || isLegacyError(err)) {
    res.status(statusOf(err)).send(err.type !== undefined && retryable.has(err.type) ? 'retry' : err.message)
    return
  }
  next(err)
})

export default app
