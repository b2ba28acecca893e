// The reader bodykit had before its own (test oracle): busboy 1.6 with the hooks that made it read one way however a
// body is split (busboy-feed.ts, filename-fallback.ts), reporting to a policy's collector as the stage does.
import type { IncomingMessage } from 'node:http'
import type { Readable } from 'node:stream'
import busboy from 'busboy'
import type { StageReading } from '../../../src/read'
import type { ReadingConfig } from '../../../src/multipart/form-reading'
import type { PartCollector } from '../../../src/multipart/part-collector'
import { feedBusboy, readAlikeHoweverSplit } from './busboy-feed'
import { fallBackFromUnreadableFileNames } from './filename-fallback'

/** The body as the old reader read it: a Readable's events (the pipeline's input is no longer one). */
type StageInput = Pick<Readable, 'on' | 'once' | 'removeListener' | 'pause' | 'resume' | 'readableEnded'>

/**
 * busboy's `defCharset` for `undeclaredAsBytes`: busboy looks a field's charset up as given, then by `toLowerCase()`;
 * this object matches no name, so the lookup records that the field declared none and answers latin1.
 */
class UndeclaredCharset {
  used = false
  toLowerCase (): string {
    this.used = true
    return 'latin1'
  }
}

/** Reads `source` (a form with the request's Content-Type) with busboy, reporting to `collector`, as bodykit's stage before its own reader. */
export function readWithBusboyStage (source: StageInput, req: IncomingMessage, config: ReadingConfig, collector: PartCollector): StageReading {
  let parser: busboy.Busboy
  const undeclared = config.undeclaredAsBytes === true ? new UndeclaredCharset() : null
  try {
    parser = busboy({
      ...config,
      ...(undeclared === null ? {} : { defCharset: undeclared as unknown as string }),
      headers: { 'content-type': req.headers['content-type'] as string }
    } as busboy.BusboyConfig)
  } catch (err) {
    collector.parserError(err as Error, false)
    return { abort: (callback) => { collector.abort(callback) }, judged: (callback) => { collector.whenJudged(callback) } }
  }
  fallBackFromUnreadableFileNames(parser, config.defParamCharset, (name) => { collector.unreadableFileName(name) })
  parser.on('field', (name: string | undefined, value: string | undefined, info: busboy.FieldInfo) => {
    const asBytes = undeclared?.used === true
    if (asBytes) undeclared.used = false
    // Read as latin1, the value is its bytes, one character each.
    collector.field(name, asBytes && value !== undefined ? Buffer.from(value, 'latin1') : value, info)
  })
  parser.on('file', (name: string | undefined, stream: Readable, info: busboy.FileInfo) => { collector.file(name, stream, info) })
  let received = 0
  const onData = (chunk: Buffer): void => { received += chunk.length }
  source.on('data', onData)
  parser.on('partsLimit', () => { collector.countLimit('parts') })
  parser.on('filesLimit', () => { collector.countLimit('files') })
  parser.on('fieldsLimit', () => { collector.countLimit('fields') })
  let failed = false
  let stopFeed = (): void => {}
  parser.on('error', (err: Error) => {
    if (failed) return
    failed = true
    stopFeed()
    source.removeListener('data', onData)
    collector.parserError(err, received === 0)
  })
  parser.on('close', () => {
    source.removeListener('data', onData)
    collector.end()
  })
  readAlikeHoweverSplit(parser)
  stopFeed = feedBusboy(parser, source, [], () => failed, {
    fault (thrown) {
      failed = true
      source.removeListener('data', onData)
      collector.fault(thrown)
    },
    stalled () { parser.destroy(new Error('Unexpected end of form')) }
  })
  return {
    abort (callback) {
      stopFeed()
      source.removeListener('data', onData)
      parser.on('error', () => {})
      parser.destroy()
      collector.abort(callback)
    },
    // The oracle is compared on what it reports, not on when it has judged.
    judged (callback) { setTimeout(() => { collector.whenJudged(callback) }, 5) }
  }
}
