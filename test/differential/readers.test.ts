// Differential suite for the promise API: the default corpus through readJson etc. (wrapped as middlewares) vs body-parser 2.4.0.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { describe } from 'node:test'
import bodykit from '../../src/index'
import { modern } from '../../src/variants'
import { corpusFor } from './corpus'
import { defineDifferentialSuite, describeTargets, type ParserModule } from './harness'

type Read = (req: IncomingMessage, options?: Record<string, unknown> | null) => Promise<unknown>
type Factory = (options?: Record<string, unknown> | null) => unknown

/**
 * A middleware made of a reader, doing what the real one adds around the pipeline: option errors thrown
 * at creation (the reader rejects with the same TypeError, per call), `req.body` prepared, then set.
 */
function promised (read: Read, factory: Factory): ParserModule['json'] {
  return (options) => {
    factory(options as Record<string, unknown> | undefined)
    return function readerMiddleware (req: IncomingMessage & { body?: unknown }, res: ServerResponse, next: (err?: unknown) => void) {
      if (!modern.isAlreadyRead(req)) modern.prepareBody(req)
      read(req, { ...(options as object), res }).then((body) => {
        if (body !== undefined) req.body = body
        next()
      }, next)
    }
  }
}

const candidate: ParserModule = {
  json: promised(bodykit.readJson as Read, bodykit.json as Factory),
  raw: promised(bodykit.readRaw as Read, bodykit.raw as Factory),
  text: promised(bodykit.readText as Read, bodykit.text as Factory),
  urlencoded: promised(bodykit.readUrlencoded as Read, bodykit.urlencoded as Factory)
}

describe(`differential promise API: readJson, readRaw, readText, readUrlencoded vs ${describeTargets('default')}`, () => {
  // A promise settles a tick later than the middleware calls `next`: never before the middleware returned
  // (nextSync), and with the stream seen later (stream: Node has destroyed an ended request by then, and
  // the bounded discard after an error known from the headers has begun). Everything else is compared.
  // A `type` function that throws makes the middleware throw (Express then calls next with it); a reader
  // rejects with it instead, as test/http/readers.test.ts checks: that one case is left out here.
  const cases = corpusFor('default').filter((c) => c.name !== 'type option: fnThrows')
  defineDifferentialSuite('default', cases, { candidate, ignore: ['nextSync', 'stream'] })
})
